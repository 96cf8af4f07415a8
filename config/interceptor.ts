/**
 * Parameters of `hivenode interceptor <module>` (the interceptor kit; not in the spec), and the one
 * parameter every service calling interceptors shares.
 */
import type { ParamTable } from './params.js';

// a parameter table: one parameter a line, as README prints it (the formatter leaves it so)
// prettier-ignore
export const INTERCEPTOR_PARAMS = [
  { name: 'Port', type: 'int', default: '8081', min: 0, max: 65535, beyondSpec: true, description: 'Port the mapping function is served on (0 picks a free one).' },
  { name: 'IP', type: 'string', default: '127.0.0.1', beyondSpec: true, description: 'Listen address.' },
] as const satisfies ParamTable;

/** Of the gateway and the HTTP client: interceptors are usually local, so they are called direct. */
export const INTERCEPT_PROXY_PARAM = {
  name: 'InterceptProxy',
  type: 'bool',
  default: 'false',
  beyondSpec: true,
  description:
    "Call http(s) interceptors through the proxy too (the HTTP client's Proxy, else HTTP_PROXY/HTTPS_PROXY/NO_PROXY); false calls them direct.",
} as const satisfies ParamTable[number];
