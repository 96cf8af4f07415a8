/**
 * The interceptor wire format (README, The REST gateway "Interceptor function contract",
 * docs/ARCHITECTURE.md, Result shapes): POST `{type, value, options}` → `{data, status,
 * status_code, options}`. Shared by the gateway, the HTTP client and the `hivenode interceptor`
 * kit.
 */
import { BadInputError } from '../../protocol/errors.js';
import { emptyRecord, isForbiddenKey } from '../../protocol/message.js';

/** What an interceptor receives. */
export interface InterceptorRequest {
  /** 'json' or 'text' (other raw types need a custom reader). */
  type: string;
  /** The payload: parsed JSON for 'json', a string for 'text'. */
  value: unknown;
  options: Record<string, string>;
}

/** What an interceptor returns. */
export interface InterceptorReply {
  /** Replacement payload or protocol message. */
  data: unknown;
  /** Status text. */
  status: string;
  /** Status code; outside 200-299 aborts the flow. */
  status_code: number;
  options: Record<string, string>;
}

function stringMap(v: unknown, where: string): Record<string, string> {
  const out = emptyRecord<string>();
  if (v === undefined || v === null) return out;
  if (typeof v !== 'object' || Array.isArray(v)) throw new BadInputError(`${where} must be an object of name -> text`);
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
    if (isForbiddenKey(k)) throw new BadInputError(`${where} key '${k}' is not allowed`);
    if (typeof val !== 'string') throw new BadInputError(`${where}.${k} must be a text, got ${typeof val}`);
    out[k] = val;
  }
  return out;
}

/** Validates an untrusted interceptor reply; `status_code` may also come as Code or Status (README, Services). */
export function validateReply(input: unknown, where = 'interceptor reply'): InterceptorReply {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new BadInputError(`${where} must be an object with data, status, status_code`);
  const o = input as Record<string, unknown>;
  const code = o.status_code ?? o.Code ?? o.Status ?? 200;
  if (typeof code !== 'number' || !Number.isInteger(code) || code < 100 || code > 599)
    throw new BadInputError(`${where}.status_code must be an integer from 100 to 599`);
  const status = o.status ?? o.Message ?? '';
  if (typeof status !== 'string') throw new BadInputError(`${where}.status must be a text`);
  return { data: o.data, status, status_code: code, options: stringMap(o.options, `${where}.options`) };
}

/** Validates an untrusted interceptor request (the kit's server side). */
export function validateRequest(input: unknown, where = 'interceptor request'): InterceptorRequest {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new BadInputError(`${where} must be an object with type, value, options`);
  const o = input as Record<string, unknown>;
  if (typeof o.type !== 'string') throw new BadInputError(`${where}.type must be a text`);
  return { type: o.type, value: o.value, options: stringMap(o.options, `${where}.options`) };
}

/** The trace a call carries to an interceptor (its traceparent and tracestate headers). */
export interface Trace {
  traceparent: string;
  tracestate?: string | undefined;
}
