/**
 * The process's tracing (docs/ARCHITECTURE.md, Tracing). Three modes, chosen at start from the
 * node's TracingSettings:
 * - off (OTEL_PROPAGATORS=none): no trace context anywhere; every helper returns undefined.
 * - propagate (the default: nothing to export to): the traceparent a message arrived with travels on
 *   unchanged, and a front door (gateway, syslog receiver) starts one when none came; no span
 *   object, and the OpenTelemetry packages are not even loaded.
 * - record (an OTLP endpoint, or an exporter a test gives): every hop is an OpenTelemetry span
 *   (trace-recorder.ts), exported in batches and kept in the trace ring when sampled.
 * Spans are parented explicitly from the traceparent of the message, never from a global context
 * manager: a message's trace crosses actor mailboxes, processes and a queue's hours-long wait.
 */
import type { Attributes } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { TracingSettings } from '../../config/tracing.js';
import { DEFAULT_TRACING } from '../../config/tracing.js';
import type { SpanParent } from './trace-context.js';
import { boundTracestate, newTraceparent, parseTraceparent } from './trace-context.js';
import type { Hop, HopKind, Recorder } from './trace-hop.js';
import { CarriedScope, enableScopes } from './trace-scope.js';
import { traceRing } from './trace-ring.js';

export type TracingMode = 'off' | 'propagate' | 'record';
export type { Hop, HopKind } from './trace-hop.js';
let mode: TracingMode = 'propagate';
let recorder: Recorder | undefined;

export function tracingMode(): TracingMode {
  return mode;
}

/** What startTracing returns: flush exports what is batched; shutdown also stops recording. */
export interface TracingHandle {
  readonly mode: TracingMode;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * Sets the process's tracing from `settings`; `exporter` (tests: the SDK's InMemorySpanExporter)
 * records and hands each span over at once instead of exporting over OTLP. A recorder set before
 * is shut down (its batch flushed first). `onExportFailed` gets a line when the collector did not take a
 * batch after its retries (at most one a minute: otlp-export.ts).
 */
export async function startTracing(
  settings: TracingSettings,
  opts: { exporter?: SpanExporter; onExportFailed?: (line: string) => void } = {},
): Promise<TracingHandle> {
  const next: TracingMode = !settings.propagate
    ? 'off'
    : settings.endpoint !== '' || opts.exporter
      ? 'record'
      : 'propagate';
  const created =
    next === 'record'
      ? (await import('./trace-recorder.js')).createRecorder(settings, traceRing, opts.exporter, opts.onExportFailed)
      : undefined;
  const previous = recorder;
  recorder = created;
  mode = next;
  enableScopes(mode !== 'off');
  await previous?.shutdown().catch(() => undefined);
  return {
    mode: next,
    flush: () => created?.flush() ?? Promise.resolve(),
    shutdown: async () => {
      if (created === undefined) return;
      if (recorder === created) await startTracing(DEFAULT_TRACING);
      else await created.shutdown();
    },
  };
}

/** Back to the default (propagate, nothing recorded), flushing what was batched. */
export async function stopTracing(): Promise<void> {
  await startTracing(DEFAULT_TRACING);
}

/** Exports what is batched now (a node's drain; a test before it reads its receiver). */
export function flushTracing(): Promise<void> {
  return recorder?.flush() ?? Promise.resolve();
}

/**
 * A trace carried on as it came, or as a front door started it (propagate mode): nothing recorded,
 * and the traceparent is cut for its trace id, and checked, only when a log line asks for it.
 * Most messages log nothing, and the check and the cutting were a third of the mode's cost.
 */
class CarriedHop extends CarriedScope implements Hop {
  constructor(
    traceparent: string,
    readonly tracestate: string | undefined,
  ) {
    super(traceparent);
  }
  end(): void {}
}

/** Whether hops are recorded (a span each): only then do they need a name and attributes. */
export function recording(): boolean {
  return recorder !== undefined;
}

/**
 * One hop of the trace `traceparent` names: a span (record mode), or the trace passed on as it came
 * (propagate); `attributes` are built only for a recorded span. Where no valid traceparent came,
 * `start` says whether to begin a trace even when only propagating (front doors do; a service
 * without one records a root span in record mode only). Undefined when there is no trace to carry;
 * when only propagating, a service's hop carries a malformed traceparent on as it came (its traceId
 * is then undefined: log lines go without one).
 */
// eslint-disable-next-line max-params -- per hop; the same parameters as recordedHop, which the hot paths call
export function beginHop(
  name: string,
  service: string,
  kind: HopKind,
  traceparent: string | undefined,
  tracestate: string | undefined,
  opts: { start: boolean; attributes?: () => Attributes },
): Hop | undefined {
  if (recorder !== undefined) return recorder.begin(name, service, kind, traceparent, tracestate, opts.attributes?.());
  return carriedHop(traceparent, tracestate, opts.start);
}

/**
 * beginHop when `recording()` is true, for the hot paths: the attributes given as they are, no
 * options object or closure per hop; `parent`: the span `traceparent` names, when this process
 * recorded it (trace-scope.ts: spanParent). Should nothing record after all, the trace is carried
 * (as beginHop without `start`).
 */
// eslint-disable-next-line max-params -- per hop on the hot paths: no options object or closure per hop (see above)
export function recordedHop(
  name: string,
  service: string,
  kind: HopKind,
  traceparent: string | undefined,
  tracestate: string | undefined,
  attributes: Attributes,
  parent: SpanParent | undefined,
): Hop | undefined {
  return recorder !== undefined
    ? recorder.begin(name, service, kind, traceparent, tracestate, attributes, parent)
    : carriedHop(traceparent, tracestate, false);
}

/**
 * beginHop when nothing records (`recording()` false), for the hot paths: the hop's name and
 * attributes, which only a span reads, are then not even put together.
 */
export function carriedHop(
  traceparent: string | undefined,
  tracestate: string | undefined,
  start: boolean,
): Hop | undefined {
  if (mode === 'off') return undefined;
  if (traceparent === undefined) return start ? new CarriedHop(newTraceparent(), undefined) : undefined;
  // a tracestate travels with queue entries and upstream: never more than the specification's limits
  if (tracestate !== undefined) tracestate = boundTracestate(tracestate);
  // a service's hop carries what the message came with, unread (a hop passes on what it was given)
  if (!start) return new CarriedHop(traceparent, tracestate);
  // a front door answers with what it passes on: a malformed header starts a new trace
  const parent = parseTraceparent(traceparent);
  return parent ? new CarriedHop(parent.text, tracestate) : new CarriedHop(newTraceparent(), undefined);
}
