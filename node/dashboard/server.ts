/**
 * The dashboard endpoint of a node: `/` the HTML page, `/api/status` its JSON twin, `/metrics` the
 * Prometheus text. Read-only; bind it to a private address in production.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listenOn } from '../../actors/shared/listen.js';
import type { NodeMetrics } from './metrics.js';
import { renderPage } from './page.js';
import type { NodeStatus } from './status.js';
import { describeError } from '../../protocol/errors.js';

export interface RunningDashboard {
  port: number;
  close(): Promise<void>;
}

export async function startDashboard(port: number, status: () => NodeStatus, metrics: NodeMetrics, host = '0.0.0.0'): Promise<RunningDashboard> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (code: number, type: string, body: string): void => {
      res.writeHead(code, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    };
    if (req.method !== 'GET') return send(405, 'text/plain; charset=utf-8', 'GET only');
    if (path === '/') return send(200, 'text/html; charset=utf-8', renderPage(status()));
    if (path === '/api/status') return send(200, 'application/json; charset=utf-8', JSON.stringify(status()));
    if (path === '/metrics') {
      metrics.text().then(
        (text) => send(200, metrics.contentType, text),
        (e: unknown) => send(500, 'text/plain; charset=utf-8', describeError(e)),
      );
      return;
    }
    send(404, 'text/plain; charset=utf-8', 'not found: try /, /api/status or /metrics');
  });
  await listenOn(server, { service: 'dashboard', port, host });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
