/** HTTP client parameters, transcribed from spec §2.7 (general and input configuration included). */
import { GENERAL_PARAMS, INPUT_PARAMS } from './common.js';
import type { ParamTable } from './params.js';

const HTTPCLIENT_OWN = [
  { name: 'Method', type: 'string', default: '', description: 'HTTP method of the outgoing request.' },
  { name: 'URL', type: 'string', default: '', description: 'URL of the outgoing request.' },
  { name: 'ContentType', type: 'string', default: 'application/json', description: 'Content type of the request; a Content-Type in Headers overrides it.' },
  { name: 'Headers', type: 'string', default: '', secret: true, description: "Extra headers, separated by CR LF, in the form 'Name: value'." },
  { name: 'InterceptBefore', type: 'string', default: '', description: 'URL of the before mapper.' },
  { name: 'InterceptAfter', type: 'string', default: '', description: 'URL of the after mapper.' },
] as const satisfies ParamTable;

export const HTTPCLIENT_PARAMS = [...GENERAL_PARAMS, ...INPUT_PARAMS, ...HTTPCLIENT_OWN] as const satisfies ParamTable;
