/** REST gateway parameters, transcribed from spec §2.4 (general and output configuration included). */
import { GENERAL_PARAMS, OUTPUT_PARAMS } from './common.js';
import type { ParamTable } from './params.js';

const GATEWAY_OWN = [
  { name: 'Port', type: 'int', default: '80', min: 0, max: 65535, description: 'HTTP listening port.' },
  { name: 'ResponseHeaders', type: 'string', default: '', description: 'Extra response headers, separated by CR LF.' },
  { name: 'DevMode', type: 'bool', default: 'false', description: 'Opens CORS headers and passes all controls.' },
  { name: 'RequestTimeout', type: 'duration', default: '60s', description: 'Timeout of the request to the hive.' },
  { name: 'BasePath', type: 'string', default: '/', description: 'Base path prepended to URLs.' },
  { name: 'HealthcheckPath', type: 'string', default: 'healthcheck', description: 'Path of the health check (GET only).' },
  { name: 'Strict', type: 'bool', default: 'false', description: 'Accept only protocol-message-shaped requests.' },
  { name: 'ControlPrefix', type: 'string', default: '', description: 'Prefix marking control fields inside Data.' },
  { name: 'ControlAllowList', type: 'string', default: '', description: "Controls allowed to pass, separated by comma or semicolon; '*' allows every control (intended for non-production use)." },
  { name: 'InterceptBefore', type: 'string', default: '', description: 'URL of the before mapper; mandatory when Strict is false.' },
  { name: 'InterceptAfter', type: 'string', default: '', description: 'URL of the after mapper; mandatory when Strict is false.' },
  { name: 'DefaultClass', type: 'string', default: 'rest', description: 'Class used when none is set.' },
  { name: 'DefaultOperation', type: 'string', default: 'input', description: 'Operation used when none is set.' },
] as const satisfies ParamTable;

export const GATEWAY_PARAMS = [...GENERAL_PARAMS, ...OUTPUT_PARAMS, ...GATEWAY_OWN] as const satisfies ParamTable;
