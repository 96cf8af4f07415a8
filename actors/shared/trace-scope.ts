/**
 * The trace of the message being handled, wherever the handling has got to (docs/ARCHITECTURE.md,
 * Tracing): an AsyncLocalStorage scope entered once per message by the gateway and the serve kit,
 * so a log line, an interceptor call or an outgoing HTTP request deep in a service finds the
 * message's trace without every function between passing it on. On Node 20 a scope in use turns
 * on promise hooks for the whole process, so the storage is switched off entirely when trace
 * context is off (OTEL_PROPAGATORS=none), and nothing but a branch is left per message.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { TRACEPARENT, TRACESTATE } from './trace-context.js';

/** What a span of ours exposes to the code running inside it. */
export interface ScopeSpan {
  setAttributes(attributes: Record<string, string | number | boolean>): void;
}

/** The trace of one message's handling. */
export interface TraceScope {
  readonly traceId: string;
  /** What goes on to the next hop: the current span's traceparent (the incoming one when nothing is recorded). */
  readonly traceparent: string;
  readonly tracestate?: string | undefined;
  /** The span recording this handling, when tracing is exported. */
  readonly span?: ScopeSpan | undefined;
}

const storage = new AsyncLocalStorage<TraceScope>();
let enabled = true;

/** Switches the scopes on or off (off: runInScope just runs, and the storage's hooks are released). */
export function enableScopes(on: boolean): void {
  enabled = on;
  if (!on) storage.disable();
}

/** Runs `fn` with `scope` as the current trace (straight through when there is none or scopes are off). */
export function runInScope<R>(scope: TraceScope | undefined, fn: () => R): R {
  return scope === undefined || !enabled ? fn() : storage.run(scope, fn);
}

/** The trace of the message being handled here, if any. */
export function currentScope(): TraceScope | undefined {
  return enabled ? storage.getStore() : undefined;
}

/** Adds attributes to the span of the message being handled; built only when that span is recorded. */
export function annotateSpan(attributes: () => Record<string, string | number | boolean>): void {
  const span = currentScope()?.span;
  if (span) span.setAttributes(attributes());
}

/** Adds the current traceparent (and tracestate) to outgoing HTTP headers, unless they carry their own. */
export function addTraceHeaders<V extends string | string[]>(headers: Record<string, V>, wrap: (value: string) => V): Record<string, V> {
  const scope = currentScope();
  if (scope === undefined) return headers;
  const names = Object.keys(headers).map((k) => k.toLowerCase());
  if (!names.includes(TRACEPARENT)) {
    headers[TRACEPARENT] = wrap(scope.traceparent);
    if (scope.tracestate && !names.includes(TRACESTATE)) headers[TRACESTATE] = wrap(scope.tracestate);
  }
  return headers;
}
