/** Exec service parameters, transcribed from spec §2.5 (general and input configuration included). */
import { GENERAL_PARAMS, INPUT_PARAMS, TEMPLATE_DEBUG_PARAMS } from './common.js';
import type { ParamTable } from './params.js';

const EXEC_OWN = [
  { name: 'Template', type: 'string', mandatory: true, description: "Template producing the command and its arguments. Source: 'file://<path>', 'hive://<name>' or an inline string." },
] as const satisfies ParamTable;

export const EXEC_PARAMS = [...GENERAL_PARAMS, ...INPUT_PARAMS, ...TEMPLATE_DEBUG_PARAMS, ...EXEC_OWN] as const satisfies ParamTable;
