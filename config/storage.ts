/**
 * Parameters of the template storage service that answers `hive://<name>` lookups
 * (docs/ARCHITECTURE.md, The hive).
 */
import { GENERAL_PARAMS, INPUT_PARAMS } from './common.js';
import type { ParamTable } from './params.js';

// a parameter table: one parameter a line, as README prints it (the formatter leaves it so)
// prettier-ignore
const STORAGE_OWN = [
  { name: 'Directory', type: 'string', default: 'templates', beyondSpec: true, description: 'Directory holding the templates; hive://<name> reads <Directory>/<name>.' },
] as const satisfies ParamTable;

export const STORAGE_PARAMS = [...GENERAL_PARAMS, ...INPUT_PARAMS, ...STORAGE_OWN] as const satisfies ParamTable;
