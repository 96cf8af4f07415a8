/** Parameters of the diagnostic echo service (not in the spec: a tool for testing wiring). */
import { GENERAL_PARAMS, INPUT_PARAMS } from './common.js';
import type { ParamTable } from './params.js';

// a parameter table: one parameter a line, as README prints it (the formatter leaves it so)
// prettier-ignore
const ECHO_OWN = [
  { name: 'RecordFile', type: 'string', default: '', beyondSpec: true, description: 'When set, every received message is appended to this file as one JSON line, fsynced before answering.' },
  { name: 'ReplyCode', type: 'int', default: '200', min: 100, max: 599, beyondSpec: true, description: 'Code to answer with instead of 200.' },
  { name: 'Delay', type: 'duration', default: '0', unit: 'ms', beyondSpec: true, description: 'Wait before answering (plain numbers are milliseconds).' },
] as const satisfies ParamTable;

export const ECHO_PARAMS = [...GENERAL_PARAMS, ...INPUT_PARAMS, ...ECHO_OWN] as const satisfies ParamTable;
