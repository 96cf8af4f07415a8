/** Exec service parameters, as the service specification lists them (general and input configuration included); README, Parameter reference prints them (and README, The exec service says what they do). */
import { GENERAL_PARAMS, INPUT_PARAMS, TEMPLATE_BUDGET_PARAMS, TEMPLATE_DEBUG_PARAMS } from './common.js';
import type { ParamTable } from './params.js';

// a parameter table: one parameter a line, as README prints it (the formatter leaves it so)
// prettier-ignore
const EXEC_OWN = [
  { name: 'Template', type: 'string', mandatory: true, description: "Template producing the command and its arguments. Source: 'file://<path>', 'hive://<name>' or an inline string." },
  { name: 'TemplateChannel', type: 'string', default: 'DefaultStorageChannel', beyondSpec: true, description: 'Hive channel from which hive:// templates are fetched.' },
  { name: 'Timeout', type: 'duration', default: '60s', beyondSpec: true, description: 'Longest run of one command; then it is answered 504 at once (with the output so far) and every process it started gets SIGTERM, and SIGKILL after KillGrace.' },
  { name: 'KillGrace', type: 'duration', default: '5s', beyondSpec: true, description: "Wait between SIGTERM and SIGKILL of a timed-out command's processes, and of those a finished command left running." },
  { name: 'MaxOutputBytes', type: 'int', default: '1048576', min: 0, beyondSpec: true, description: 'Bytes kept of stdout and of stderr each; the rest is read and discarded, and Data truncated says so.' },
  { name: 'MaxConcurrent', type: 'int', default: '8', min: 1, max: 1024, beyondSpec: true, description: 'Commands running at once.' },
  { name: 'MaxWaiting', type: 'int', default: '64', min: 0, beyondSpec: true, description: 'Messages waiting for a free slot; more are answered 429.' },
  { name: 'WaitTimeout', type: 'duration', default: '10s', beyondSpec: true, description: 'Longest wait for a free slot (then 429).' },
  { name: 'EnvAllowList', type: 'string', default: 'PATH,HOME,LANG,LC_ALL,TZ', beyondSpec: true, description: "Environment variables passed to commands (and readable by env()), comma separated; the service's own secrets are never passed." },
  { name: 'WorkDir', type: 'string', default: '', beyondSpec: true, description: "Working directory of commands ('' = the node's)." },
  { name: 'AllowedCommands', type: 'string', default: '', beyondSpec: true, description: "If set, the only commands that may run: absolute paths separated by commas (setCmd must name one exactly)." },
  { name: 'StdinField', type: 'string', default: '', beyondSpec: true, description: "Data field whose values, joined by newlines, are written to the command's standard input ('' = none)." },
] as const satisfies ParamTable;

export const EXEC_PARAMS = [
  ...GENERAL_PARAMS,
  ...INPUT_PARAMS,
  ...TEMPLATE_DEBUG_PARAMS,
  ...EXEC_OWN,
  ...TEMPLATE_BUDGET_PARAMS,
] as const satisfies ParamTable;
