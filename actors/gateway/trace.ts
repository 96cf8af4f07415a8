/**
 * The gateway's hop of a request's trace (docs/ARCHITECTURE.md, Tracing): it continues the
 * `traceparent` header a client sent, or starts a trace, and answers every request it handles
 * with the `traceparent` of its hop, so a caller can find the trace of any answer, a failed one
 * above all. The message the request becomes carries the same trace (handler.ts: putHop).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { TRACEPARENT, TRACESTATE } from '../observe/trace-context.js';
import { HopName } from '../observe/trace-hop.js';
import type { Hop } from '../observe/tracing.js';
import { carriedHop, recordedHop, recording } from '../observe/tracing.js';
import type { GatewayResponse } from './respond.js';

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** The span names of one gateway's requests: `<gateway> <method>`. */
export const requestHopName = (service: string): HopName => new HopName((method) => `${service} ${method}`);

/**
 * Begins the request's hop and sets its traceparent response header; undefined when tracing is off.
 * `name`: the gateway's requestHopName.
 */
export function requestHop(
  req: IncomingMessage,
  res: ServerResponse,
  service: string,
  name: HopName,
  subPath: string,
): Hop | undefined {
  const traceparent = header(req, TRACEPARENT);
  const tracestate = header(req, TRACESTATE);
  const hop = recording()
    ? recordedHop(
        name.of(req.method ?? ''),
        service,
        'server',
        traceparent,
        tracestate,
        { 'http.request.method': req.method ?? '', 'url.path': subPath },
        undefined,
      )
    : carriedHop(traceparent, tracestate, true);
  // written with the head (respond.ts: send), for every answer the request gets
  if (hop) (res as GatewayResponse).traceparent = hop.traceparent;
  return hop;
}

/** Ends the request's hop with the status answered. */
export function endRequestHop(hop: Hop | undefined, res: ServerResponse): void {
  if (hop?.span === undefined) return;
  hop.span.setAttribute('http.response.status_code', res.statusCode);
  hop.end(res.statusCode);
}
