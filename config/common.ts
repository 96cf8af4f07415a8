/**
 * Parameters every service carries (spec §2.1 "Common parameter"), split as the spec splits them:
 * general, input and output configuration.
 */
import type { ParamTable } from './params.js';

/** General service configuration: every service has these. */
export const GENERAL_PARAMS = [
  { name: 'NAME', type: 'string', description: 'Service instance name.' },
  { name: 'SERVERHOST', type: 'string', description: "Host name of the hive: empty or 'embedded' for the in-process hive, 'nats://host:port' or 'tls://host:port' for NATS." },
  { name: 'SERVERAUTH', type: 'string', secret: true, description: "Key used to authenticate to the hive; may be a 'file://<path>' reference to a secret file." },
  { name: 'LOGLEVEL', type: 'enum', values: ['trace', 'debug', 'info', 'warn', 'error'], description: "Log verbosity; values seen: 'DEBUG', 'trace' (info when not set)." },
  { name: 'LOGFORMAT', type: 'enum', values: ['TEXT/DEFAULT', 'TEXT', 'DEFAULT', 'JSON'], description: "Value seen: 'TEXT/DEFAULT'; 'JSON' writes one JSON object per line." },
  { name: 'LOGSENSITIVE', type: 'bool', description: "Boolean; value seen: 'false'. When false (or not set), secrets and credentials are masked in logs." },
] as const satisfies ParamTable;

/** Input configuration: services that listen on a hive channel. */
export const INPUT_PARAMS = [
  { name: 'INPUTCHANNEL', type: 'string', description: 'Hive channel the service listens on (when not set: the NAME, else the default channel of the service kind, shown by hivenode params).' },
] as const satisfies ParamTable;

/** Output configuration: services that write to a hive channel. */
export const OUTPUT_PARAMS = [{ name: 'OUTPUTCHANNEL', type: 'string', default: 'main', description: 'Hive channel the service writes to.' }] as const satisfies ParamTable;

/** Template debugging: services that render users' templates (queue, exec). */
export const TEMPLATE_DEBUG_PARAMS = [
  { name: 'DEBUG_TEMPLATE', type: 'bool', description: "Boolean-like; value seen: 'TRUE' (queue). Logs every rendered template result." },
] as const satisfies ParamTable;
