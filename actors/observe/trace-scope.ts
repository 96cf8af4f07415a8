/**
 * The trace of the message being handled (docs/ARCHITECTURE.md, Tracing), for what cannot be handed
 * it as an argument: a log line. The scope is synchronous: the serve kit enters it around a
 * handler's synchronous part and around its answer's observer, the gateway around its lines about
 * a request. AsyncLocalStorage would follow every await, but on Node 20 it turns on promise hooks
 * for the whole process: measured with bench/gateway-tracing.ts, it cost the gateway a third of its
 * throughput with nothing exported. What travels on (a message, an HTTP request, an interceptor
 * call) is given its trace explicitly instead.
 */
import type { Message } from '../../protocol/message.js';
import type { SpanParent } from './trace-context.js';
import { TRACEPARENT, TRACESTATE, parseTraceparent } from './trace-context.js';

const traceIdOfTraceparent = (value: string | undefined): string | undefined => parseTraceparent(value)?.traceId;

/** What a span of ours exposes to the code it describes, and to a child of it begun in this process. */
export interface ScopeSpan extends SpanParent {
  setAttributes(attributes: Record<string, string | number | boolean>): void;
  setAttribute(key: string, value: string | number | boolean): void;
  /** The traceparent naming the span: what the message carrying it has in its Control. */
  readonly traceparent: string;
}

/** What a scope tells the code running in it (a log line, the journal): the trace id it is in. */
export interface ScopeTrace {
  /** Undefined when there is no trace, or the traceparent carried on unread turns out not to be one (tracing.ts: CarriedHop). */
  readonly traceId: string | undefined;
}

/** The trace of one message's handling. */
export interface TraceScope extends ScopeTrace {
  /** What goes on to the next hop: the current span's traceparent (the incoming one when nothing is recorded). */
  readonly traceparent: string;
  readonly tracestate?: string | undefined;
  /** The span recording this handling, when tracing is exported. */
  readonly span?: ScopeSpan | undefined;
}

let current: ScopeTrace | undefined;
let enabled = true;

/** Switches the scopes on or off (off: runInScope just runs `fn`). */
export function enableScopes(on: boolean): void {
  enabled = on;
  if (!on) current = undefined;
}

/** Runs `fn` with `scope` as the current trace, restoring the one before (straight through when there is none). */
export function runInScope<R>(scope: ScopeTrace | undefined, fn: () => R): R {
  if (scope === undefined || !enabled) return fn();
  const before = current;
  current = scope;
  try {
    return fn();
  } finally {
    current = before;
  }
}

/**
 * Makes `scope` the current trace and returns the one before, to be given back to leaveScope in a
 * finally: runInScope without the closure (the serve kit enters a scope per message; the closure
 * and the call through it were most of what the scope cost a message).
 */
export function enterScope(scope: ScopeTrace | undefined): ScopeTrace | undefined {
  const before = current;
  if (scope !== undefined && enabled) current = scope;
  return before;
}

/** Ends what enterScope began: `before` is what it returned. */
export function leaveScope(before: ScopeTrace | undefined): void {
  current = before;
}

/** The trace of the message being handled here and now, if any. */
export function currentScope(): ScopeTrace | undefined {
  return current;
}

// the recorded span of a message a service is handed (trace-message.ts: withHop), so the service can
// describe its work on it without the span being threaded through: a symbol-keyed field of the
// message, set where the message is made (a WeakMap beside it cost the collector its ephemerons)
const SPAN = Symbol('hivenode.span');
type Spanned = Message & { [SPAN]?: ScopeSpan };

/**
 * `message` with the Control `control`, carrying `span` for annotateSpan. The span is added as
 * attachSpan adds it, after the four fields: a literal with the symbol among its fields has another
 * hidden class than a front door's message given its span, and every read of a message's fields
 * downstream (the hive, the serve kit, the services) then met two classes where tracing off meets one.
 */
export function messageWithSpan(message: Message, control: Message['Control'], span: ScopeSpan | undefined): Message {
  const copy: Spanned = { Class: message.Class, Operation: message.Operation, Control: control, Data: message.Data };
  if (span !== undefined) copy[SPAN] = span;
  return copy;
}

/**
 * Carries `span` on `message` in place (a message a front door has just made, its Control holding
 * the span's traceparent), so the service it reaches in this process begins its span from the
 * span's ids instead of parsing them back out of the traceparent (spanParent).
 */
export function attachSpan(message: Message, span: ScopeSpan | undefined): void {
  if (span !== undefined) (message as Spanned)[SPAN] = span;
}

/**
 * The span `message` carries when it is the one `traceparent` names (the Control still holds the
 * span's own traceparent: the same string, compared by identity first), else undefined. A child's
 * span then takes its parent's ids as they are: parsing a traceparent made in this same process was
 * ~1,400 instructions a hop (callgrind, bench/gateway-tracing-instructions.ts), its ids being slices.
 */
export function spanParent(message: Message, traceparent: string | undefined): SpanParent | undefined {
  const span = (message as Spanned)[SPAN];
  return span !== undefined && traceparent !== undefined && span.traceparent === traceparent ? span : undefined;
}

/** Adds attributes to the span of the message being handled; built only when that span is recorded. */
export function annotateSpan(message: Message, attributes: () => Record<string, string | number | boolean>): void {
  const span = (message as Spanned)[SPAN];
  if (span) span.setAttributes(attributes());
}

/**
 * Runs `fn` in the trace `message` carries: for a log line written after an await, where the
 * synchronous scope has ended, or about a queue entry.
 */
export function inMessageTrace<R>(message: Message, fn: () => R): R {
  const traceparent = Object.hasOwn(message.Control, TRACEPARENT) ? message.Control[TRACEPARENT]![0] : undefined;
  return traceparent === undefined ? fn() : runInScope(new CarriedScope(traceparent), fn);
}

/**
 * A trace carried as it came: its traceparent is checked and cut for the trace id only when a log
 * line asks for it (undefined when it is not a traceparent), so a message that logs nothing pays
 * for neither.
 */
export class CarriedScope implements TraceScope {
  constructor(readonly traceparent: string) {}
  get traceId(): string | undefined {
    return traceIdOfTraceparent(this.traceparent);
  }
}

/** The trace a Control carries (traceparent, tracestate), for what is sent on from a message. */
export function traceOf(
  control: Message['Control'],
): { traceparent: string; tracestate?: string | undefined } | undefined {
  const traceparent = Object.hasOwn(control, TRACEPARENT) ? control[TRACEPARENT]![0] : undefined;
  if (traceparent === undefined) return undefined;
  return { traceparent, tracestate: Object.hasOwn(control, TRACESTATE) ? control[TRACESTATE]![0] : undefined };
}

/** Adds a trace's traceparent (and tracestate) to outgoing HTTP headers, unless they carry their own. */
export function addTraceHeaders<V extends string | string[]>(
  headers: Record<string, V>,
  trace: { traceparent: string; tracestate?: string | undefined } | undefined,
  wrap: (value: string) => V,
): Record<string, V> {
  if (trace === undefined) return headers;
  const names = Object.keys(headers).map((k) => k.toLowerCase());
  if (!names.includes(TRACEPARENT)) {
    headers[TRACEPARENT] = wrap(trace.traceparent);
    if (trace.tracestate && !names.includes(TRACESTATE)) headers[TRACESTATE] = wrap(trace.tracestate);
  }
  return headers;
}
