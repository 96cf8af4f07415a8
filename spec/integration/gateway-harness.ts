/**
 * A gateway under test: a node with an echo service and a gateway on port 0 in front of it, on the
 * embedded hive, logging into a buffer. Generic on purpose (any gateway or echo parameters), so the
 * functional and the security specs can share it; plus a raw-socket exchange for requests that no
 * well-behaved client library would send.
 */
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import { HiveNode } from '../../node/node.js';
import { sleep } from '../support/wait.js';

export type Params = Record<string, string | number | boolean>;

export interface RunningGateway {
  node: HiveNode;
  port: number;
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  base: string;
  /** Every log line written so far. */
  logs(): string;
  stop(): Promise<void>;
}

const layer = (source: string, params: Params): { source: string; values: Array<readonly [string, string]> } => ({
  source,
  values: Object.entries(params).map(([k, v]) => [k, String(v)] as const),
});

/**
 * Starts echo (channel 'echo' unless `echo.NAME` says otherwise) and a gateway whose OUTPUTCHANNEL is
 * that echo; gateway defaults are Port 0 and Strict true, overridden by `gateway`.
 */
export async function startGateway(gateway: Params = {}, echo: Params = {}): Promise<RunningGateway> {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c.toString()));
  const echoParams: Params = { NAME: 'echo', ...echo };
  const node = await HiveNode.start({
    logStream: stream,
    services: [
      { kind: 'echo', layers: [layer('test echo', echoParams)] },
      {
        kind: 'gateway',
        layers: [
          layer('test gateway', {
            NAME: 'gw',
            Port: 0,
            Strict: true,
            OUTPUTCHANNEL: String(echoParams.NAME),
            ...gateway,
          }),
        ],
      },
    ],
  });
  const port = node.services.find((s) => s.kind === 'gateway')!.running.status().port as number;
  return { node, port, base: `http://127.0.0.1:${port}`, logs: () => chunks.join(''), stop: () => node.stop(2000) };
}

export interface RawExchange {
  /** Everything the server sent before it closed the connection or `waitMs` passed. */
  text: string;
  /** The status code of the first response, or undefined when none came. */
  status: number | undefined;
  /** True when the server closed the connection (rather than the wait running out). */
  closed: boolean;
}

/**
 * Writes bytes to the gateway over a fresh TCP connection (in `parts` with `gapMs` between them when
 * given as an array) and collects the answer until the server closes or `waitMs` passes.
 */
export function rawExchange(
  port: number,
  request: string | Buffer | Array<string | Buffer>,
  waitMs = 2000,
  gapMs = 0,
): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closed: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ text, status: m ? Number(m[1]) : undefined, closed });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.on('connect', () => {
      void (async () => {
        for (const part of Array.isArray(request) ? request : [request]) {
          if (done || socket.destroyed) return;
          socket.write(part);
          if (gapMs > 0) await sleep(gapMs);
        }
      })();
    });
  });
}

/** The error a gateway start with `gateway` fails with (a running one is stopped and undefined returned: the caller's expectation then fails). */
export async function startError(gateway: Params): Promise<{ name?: string; message?: string } | undefined> {
  try {
    const gw = await startGateway(gateway);
    await gw.stop();
    return undefined;
  } catch (e) {
    return e as { name?: string; message?: string };
  }
}
