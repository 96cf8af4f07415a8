/** Parameters of `hivenode interceptor <module>` (the interceptor kit; not in the spec). */
import type { ParamTable } from './params.js';

export const INTERCEPTOR_PARAMS = [
  { name: 'Port', type: 'int', default: '8081', min: 0, max: 65535, beyondSpec: true, description: 'Port the mapping function is served on (0 picks a free one).' },
  { name: 'IP', type: 'string', default: '127.0.0.1', beyondSpec: true, description: 'Listen address.' },
] as const satisfies ParamTable;
