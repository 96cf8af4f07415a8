/**
 * Sends finished spans over OTLP/HTTP JSON in batches (docs/ARCHITECTURE.md, Tracing), with the
 * OpenTelemetry batch span processor's defaults: a batch goes when it holds 512 spans or 5 s after
 * its first span, at most 2,048 spans wait (beyond, new spans are dropped and counted), and a
 * request the collector refuses for the moment (429, 502, 503, 504, no connection) is sent again
 * after 1, 2, 4 s before it is dropped. A span is written into its batch's buffer when it ends, so
 * no span object waits for the export, and the buffers are reused: a batch built as one string
 * would be a large object every collection must sweep.
 */
import type { Agent as HttpAgent, ClientRequest, IncomingMessage, RequestOptions } from 'node:http';
import { Agent as PlainAgent, request as plainRequest } from 'node:http';
import { Agent as TlsAgent, request as tlsRequest } from 'node:https';
import type { Attributes } from '@opentelemetry/api';
import { OTLP_TAIL, otlpHead, spanJson } from './otlp-json.js';
import type { RecordedSpan } from './recorded-span.js';

const MAX_BATCH = 512;
/** A batch's buffer; a span that cannot fit into an empty one (attributes of megabytes) is dropped. */
const BUFFER_BYTES = 1 << 20;
const MAX_QUEUE = 2048;
const DELAY_MS = 5000;
const TIMEOUT_MS = 10_000;
const RETRY_DELAYS_MS = [1000, 2000, 4000];
const RETRIED = new Set([429, 502, 503, 504]);

export interface OtlpExporterOptions {
  /** The traces URL (…/v1/traces). */
  url: string;
  headers: Record<string, string>;
  resource: Attributes;
  scope: string;
}

export class OtlpBatchExporter {
  /** The batch being filled: its buffer, the bytes written and the spans in it. */
  private buffer: Buffer | undefined;
  private bytes = 0;
  private spans = 0;
  /** Buffers whose requests are answered, for the next batches. */
  private readonly free: Buffer[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Batches sent and not yet answered (or waiting to be sent again). */
  private readonly pending = new Set<Promise<void>>();
  private readonly head: string;
  private readonly url: URL;
  private readonly agent: HttpAgent;
  private readonly send: (url: URL, options: RequestOptions, answer: (res: IncomingMessage) => void) => ClientRequest;
  private waiting = 0;
  private stopped = false;
  /** Spans dropped: the queue was full, or the collector did not take them. */
  dropped = 0;

  constructor(private readonly opts: OtlpExporterOptions) {
    this.head = otlpHead(opts.resource, opts.scope);
    this.url = new URL(opts.url);
    const tls = this.url.protocol === 'https:';
    this.agent = tls ? new TlsAgent({ keepAlive: true, maxSockets: 2 }) : new PlainAgent({ keepAlive: true, maxSockets: 2 });
    this.send = tls ? tlsRequest : plainRequest;
  }

  /** Takes a finished span: written into the batch, which goes when full, else on the timer. */
  push(span: RecordedSpan): void {
    if (this.stopped || this.waiting + this.spans >= MAX_QUEUE) {
      this.dropped++;
      return;
    }
    // the JSON is ASCII (otlp-json.ts): a byte per character, copied as latin1 with no UTF-8 encoding;
    // the separator and the tail must fit after it
    const json = spanJson(span);
    if (this.buffer !== undefined && this.bytes + json.length + 1 + OTLP_TAIL.length > this.buffer.length) this.sendBatch();
    if (this.buffer === undefined) {
      this.buffer = this.free.pop() ?? Buffer.allocUnsafe(BUFFER_BYTES);
      this.bytes = this.buffer.write(this.head, 0, 'latin1');
      if (this.bytes + json.length + OTLP_TAIL.length > this.buffer.length) {
        this.dropped++;
        return;
      }
    }
    if (this.spans > 0) this.buffer[this.bytes++] = 0x2c; // ','
    this.bytes += this.buffer.write(json, this.bytes, 'latin1');
    this.spans++;
    if (this.spans >= MAX_BATCH) this.sendBatch();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.sendBatch(), DELAY_MS);
      this.timer.unref();
    }
  }

  /** Sends what is batched and waits for every request under way. */
  async flush(): Promise<void> {
    this.sendBatch();
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  async shutdown(): Promise<void> {
    await this.flush();
    this.stopped = true;
    this.agent.destroy();
  }

  private sendBatch(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const buffer = this.buffer;
    const count = this.spans;
    if (buffer === undefined || count === 0) return;
    const end = this.bytes + buffer.write(OTLP_TAIL, this.bytes, 'latin1');
    this.buffer = undefined;
    this.spans = 0;
    this.waiting += count;
    const sent: Promise<void> = this.post(buffer.subarray(0, end), 0).then((ok) => {
      if (!ok) this.dropped += count;
      this.waiting -= count;
      this.pending.delete(sent);
      this.free.push(buffer);
    });
    this.pending.add(sent);
  }
  /** Posts `body`; true when the collector took it. */
  private async post(body: Buffer, attempt: number): Promise<boolean> {
    const status = await new Promise<number>((resolve) => {
      const req = this.send(this.url, { method: 'POST', agent: this.agent, timeout: TIMEOUT_MS, headers: { ...this.opts.headers, 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', () => resolve(0));
      req.end(body);
    });
    if (status >= 200 && status < 300) return true;
    const delay = RETRY_DELAYS_MS[attempt];
    if (delay === undefined || this.stopped || !(status === 0 || RETRIED.has(status))) return false;
    await new Promise((r) => setTimeout(r, delay).unref());
    return this.post(body, attempt + 1);
  }
}
