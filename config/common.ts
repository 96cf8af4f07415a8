/**
 * Parameters every service carries (README, Services "Common parameter"), split as the spec splits them:
 * general, input and output configuration.
 */
import type { ParamTable } from './params.js';

/** General service configuration: every service has these. */
// a parameter table: one parameter a line, as README prints it (the formatter leaves it so)
// prettier-ignore
export const GENERAL_PARAMS = [
  { name: 'NAME', type: 'string', description: 'Service instance name.' },
  { name: 'SERVERHOST', type: 'string', description: "Host name of the hive: empty or 'embedded' for the in-process hive, 'nats://host:port' or 'tls://host:port' for NATS." },
  { name: 'SERVERAUTH', type: 'string', secret: true, description: "Key used to authenticate to the hive; may be a 'file://<path>' reference to a secret file. For NATS: a token, 'user:password', a .creds file or a user nkey seed (text or path), or 'token:<value>' to force a token." },
  { name: 'SERVERCA', type: 'string', beyondSpec: true, description: "CA certificate (PEM file path, or PEM text) the NATS hive's server certificate must be signed by; when not set, the system's trusted CAs." },
  { name: 'SERVERCERT', type: 'string', beyondSpec: true, description: 'Client certificate (PEM file path, or PEM text) presented to a NATS hive that verifies clients; needs SERVERKEY.' },
  { name: 'SERVERKEY', type: 'string', secret: true, beyondSpec: true, description: "Private key of SERVERCERT: a PEM file path, or a 'file://<path>' secret file." },
  { name: 'LOGLEVEL', type: 'enum', values: ['trace', 'debug', 'info', 'warn', 'error'], description: "Log verbosity; values seen: 'DEBUG', 'trace' (info when not set)." },
  { name: 'LOGFORMAT', type: 'enum', values: ['TEXT/DEFAULT', 'TEXT', 'DEFAULT', 'JSON'], description: "Value seen: 'TEXT/DEFAULT'; 'JSON' writes one JSON object per line." },
  { name: 'LOGSENSITIVE', type: 'bool', description: "Boolean; value seen: 'false'. When false (or not set), secrets and credentials are masked in logs." },
] as const satisfies ParamTable;

/** Input configuration: services that listen on a hive channel. */
// a parameter table: one parameter a line, as README prints it (the formatter leaves it so)
// prettier-ignore
export const INPUT_PARAMS = [
  { name: 'INPUTCHANNEL', type: 'string', description: 'Hive channel the service listens on (when not set: the NAME, else the default channel of the service kind, shown by hivenode params).' },
] as const satisfies ParamTable;

/** Output configuration: services that write to a hive channel. */
export const OUTPUT_PARAMS = [
  { name: 'OUTPUTCHANNEL', type: 'string', default: 'main', description: 'Hive channel the service writes to.' },
] as const satisfies ParamTable;

/** Template debugging: services that render users' templates (queue, exec). */
// a parameter table: one parameter a line, as README prints it (the formatter leaves it so)
// prettier-ignore
export const TEMPLATE_DEBUG_PARAMS = [
  { name: 'DEBUG_TEMPLATE', type: 'bool', description: "Boolean-like; value seen: 'TRUE' (queue). Logs every rendered template result." },
] as const satisfies ParamTable;

/**
 * The budget of one template render: services that render users' templates per message (queue,
 * exec) bound what one render builds, so one request cannot grow the heap until the node dies.
 */
// a parameter table: one parameter a line, as README prints it (the formatter leaves it so)
// prettier-ignore
export const TEMPLATE_BUDGET_PARAMS = [
  { name: 'MaxRenderChars', type: 'int', default: '16777216', min: 1, beyondSpec: true, description: 'Characters one template render may build in all: its text output plus every argument, value and entry it adds; beyond it the message is answered 413.' },
  { name: 'MaxRenderItems', type: 'int', default: '1000000', min: 1, beyondSpec: true, description: 'Arguments, values, keys and entries one template render may add in all (an entry counts with each of its keys and values); beyond it the message is answered 413.' },
] as const satisfies ParamTable;

/** How the template engine's budget errors name its limits: by these parameters. */
export const TEMPLATE_LIMIT_NAMES = { chars: 'MaxRenderChars', items: 'MaxRenderItems' } as const;

/** The template engine's budget options from a service's TEMPLATE_BUDGET_PARAMS: errors name the parameters. */
export function templateBudget(config: { MaxRenderChars: number; MaxRenderItems: number }): {
  maxChars: number;
  maxItems: number;
  limitNames: typeof TEMPLATE_LIMIT_NAMES;
} {
  return { maxChars: config.MaxRenderChars, maxItems: config.MaxRenderItems, limitNames: TEMPLATE_LIMIT_NAMES };
}
