/**
 * How an OTLP batch reaches the collector (docs/ARCHITECTURE.md, Tracing): a POST answered with an
 * HTTP status, 0 when no answer came (no connection, reset, timed out); otlp-export.ts decides what
 * is sent again. Plain http:// goes over the lean HTTP/1.1 client (lean-client.ts), the head written
 * once and the batch's buffer after it in the same write. node:http cost ~0.6 ms of CPU a batch in
 * the gateway's process, and its client objects (requests, replies, the agent's sockets) went through
 * the same node:http and stream functions as the gateway's own requests and made their property
 * reads polymorphic: ~6,000 instructions a request on the gateway bench (callgrind, exported 151,640
 * → 145,662). https:// stays on node:https (the lean client has no TLS).
 */
import type { Agent as HttpsAgent } from 'node:https';
import { Agent as TlsAgent, request as tlsRequest } from 'node:https';
import { LeanPool } from '../wire/lean-client.js';

/** Posts one batch; resolves to the HTTP status, or 0 when no answer came. */
export interface OtlpTransport {
  post(body: Buffer): Promise<number>;
  /** Closes the connections (idle ones now, the others when their answers are in). */
  close(): void;
}

/** Connections to the collector: one batch in flight and the next one going out. */
const CONNECTIONS = 2;
/** A collector's answer is an ExportTraceServiceResponse: a few bytes, or a partial-success message. */
const MAX_REPLY_BYTES = 1 << 20;

export interface TransportOptions {
  url: URL;
  contentType: string;
  /** OTEL_EXPORTER_OTLP_HEADERS: names are tokens and values printable (config/tracing.ts). */
  headers: Record<string, string>;
  timeoutMs: number;
}

export function otlpTransport(opts: TransportOptions): OtlpTransport {
  return opts.url.protocol === 'https:' ? new TlsTransport(opts) : new LeanTransport(opts);
}

class LeanTransport implements OtlpTransport {
  private readonly pool: LeanPool;
  /** The head up to the length's value. */
  private readonly head: string;

  constructor(private readonly opts: TransportOptions) {
    const { url } = opts;
    this.pool = LeanPool.forUrl(`OTLP collector ${url.origin}`, url, CONNECTIONS, MAX_REPLY_BYTES);
    let head = `POST ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: ${opts.contentType}\r\n`;
    for (const [name, value] of Object.entries(opts.headers)) head += `${name}: ${value}\r\n`;
    this.head = `${head}content-length: `;
  }

  post(body: Buffer): Promise<number> {
    return new Promise((resolve) =>
      this.pool.send(
        `${this.head}${body.length}\r\n\r\n`,
        this.opts.timeoutMs,
        (error, status) => resolve(error ? 0 : status),
        body,
      ),
    );
  }

  close(): void {
    void this.pool.close();
  }
}

class TlsTransport implements OtlpTransport {
  private readonly agent: HttpsAgent = new TlsAgent({ keepAlive: true, maxSockets: CONNECTIONS });

  constructor(private readonly opts: TransportOptions) {}

  post(body: Buffer): Promise<number> {
    const { url, contentType, headers, timeoutMs } = this.opts;
    return new Promise<number>((resolve) => {
      const req = tlsRequest(
        url,
        {
          method: 'POST',
          agent: this.agent,
          timeout: timeoutMs,
          headers: { ...headers, 'content-type': contentType, 'content-length': body.length },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('error', () => resolve(0));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', () => resolve(0));
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
