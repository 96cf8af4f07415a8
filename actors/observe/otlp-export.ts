/**
 * Sends finished spans over OTLP/HTTP in batches (docs/ARCHITECTURE.md, Tracing), with the
 * OpenTelemetry batch span processor's defaults: a batch goes when it holds 512 spans or 5 s after
 * its first span, at most 2,048 spans wait (beyond, new spans are dropped and counted), and a
 * request the collector refuses for the moment (429, 502, 503, 504, no connection) is sent again
 * after 1, 2, 4 s before it is dropped. A span is written into its batch's buffer when it ends, in the
 * configured encoding (otlp-encoding.ts: protobuf or JSON), so no span object waits for the export,
 * and the buffers are reused: a batch built as one string would be a large object every collection
 * must sweep.
 */
import type { Attributes } from '@opentelemetry/api';
import type { OtlpProtocol } from '../../config/tracing.js';
import type { OtlpEncoding } from './otlp-encoding.js';
import { OtlpJson } from './otlp-json.js';
import { OtlpProtobuf } from './otlp-protobuf.js';
import type { OtlpTransport } from './otlp-transport.js';
import { otlpTransport } from './otlp-transport.js';
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
  /** The encoding; http/protobuf when not given. */
  protocol?: OtlpProtocol;
  headers: Record<string, string>;
  resource: Attributes;
  scope: string;
  /**
   * Told when the collector did not take a batch (after its retries): at most one line a minute is
   * written from these, with the count since the last (a collector that is down must not flood the log).
   */
  onDropped?: (line: string) => void;
}

/** How often a failing export is reported. */
const DROP_REPORT_MS = 60_000;

export class OtlpBatchExporter {
  /** The batch being filled: its buffer, where its next span goes and the spans in it. */
  private buffer: Buffer | undefined;
  private at = 0;
  private spans = 0;
  /** Buffers whose requests are answered, for the next batches. */
  private readonly free: Buffer[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Batches sent and not yet answered (or waiting to be sent again). */
  private readonly pending = new Set<Promise<void>>();
  private readonly encoding: OtlpEncoding;
  private readonly transport: OtlpTransport;
  private waiting = 0;
  private stopped = false;
  /** Spans dropped: the queue was full, or the collector did not take them. */
  dropped = 0;
  private readonly url: string;
  private readonly onDropped: ((line: string) => void) | undefined;
  /** When a dropped batch was last reported, and what was dropped since without a line. */
  private reportedAt = -Infinity;
  private unreported = { batches: 0, spans: 0 };

  constructor(opts: OtlpExporterOptions) {
    this.url = opts.url;
    this.onDropped = opts.onDropped;
    this.encoding = opts.protocol === 'http/json' ? new OtlpJson(opts) : new OtlpProtobuf(opts);
    this.transport = otlpTransport({
      url: new URL(opts.url),
      contentType: this.encoding.contentType,
      headers: opts.headers,
      timeoutMs: TIMEOUT_MS,
    });
  }

  /** Takes a finished span: written into the batch, which goes when full, else on the timer. */
  push(span: RecordedSpan): void {
    if (this.stopped || this.waiting + this.spans >= MAX_QUEUE) {
      this.dropped++;
      return;
    }
    let end = this.buffer === undefined ? -1 : this.encoding.write(this.buffer, this.at, span, this.spans === 0);
    if (end < 0) {
      // the batch is full (or there is none): a new one; a span that cannot fit into an empty one (attributes of megabytes) is dropped
      this.sendBatch();
      this.buffer = this.free.pop() ?? Buffer.allocUnsafe(BUFFER_BYTES);
      this.at = this.encoding.begin(this.buffer);
      end = this.encoding.write(this.buffer, this.at, span, true);
      if (end < 0) {
        this.dropped++;
        return;
      }
    }
    this.at = end;
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
    this.transport.close();
  }

  private sendBatch(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const buffer = this.buffer;
    const count = this.spans;
    if (buffer === undefined) return;
    if (count === 0) {
      // a batch begun for a span that did not fit even alone: its buffer goes back
      this.buffer = undefined;
      this.free.push(buffer);
      return;
    }
    const body = this.encoding.end(buffer, this.at);
    this.buffer = undefined;
    this.spans = 0;
    this.waiting += count;
    const sent: Promise<void> = this.post(body, 0).then((status) => {
      const ok = status >= 200 && status < 300;
      if (!ok) {
        this.dropped += count;
        this.reportDropped(status, count);
      }
      this.waiting -= count;
      this.pending.delete(sent);
      this.free.push(buffer);
    });
    this.pending.add(sent);
  }
  /** One line for a batch the collector did not take, at most one a minute (with what was dropped since). */
  private reportDropped(status: number, spans: number): void {
    if (this.onDropped === undefined) return;
    this.unreported.batches++;
    this.unreported.spans += spans;
    const now = Date.now();
    if (now - this.reportedAt < DROP_REPORT_MS) return;
    this.reportedAt = now;
    const why =
      status === 0
        ? 'no answer (nothing listens there, or the connection failed or timed out)'
        : `it answered ${status}`;
    const { batches, spans: lost } = this.unreported;
    this.unreported = { batches: 0, spans: 0 };
    this.onDropped(
      `OTLP export to ${this.url} failed: ${why}; ${lost} span(s) of ${batches} batch(es) dropped${batches > 1 ? ' since the last such line' : ''} (OTEL_EXPORTER_OTLP_ENDPOINT)`,
    );
  }

  /** Posts `body`; the collector's last status (0: no answer). */
  private async post(body: Buffer, attempt: number): Promise<number> {
    const status = await this.transport.post(body);
    if (status >= 200 && status < 300) return status;
    const delay = RETRY_DELAYS_MS[attempt];
    if (delay === undefined || this.stopped || !(status === 0 || RETRIED.has(status))) return status;
    await new Promise((r) => setTimeout(r, delay).unref());
    return this.post(body, attempt + 1);
  }
}
