/**
 * Every service kind a node can run, with its parameter table and release tag (README, Parameter reference).
 * The single place that lists the kinds: CLI, node files, docs and the dashboard read it.
 */
import { ECHO_PARAMS } from './echo.js';
import { EXEC_PARAMS } from './exec.js';
import { FLOW_PARAMS } from './flow.js';
import { GATEWAY_PARAMS } from './gateway.js';
import { HTTPCLIENT_PARAMS } from './httpclient.js';
import type { ParamTable } from './params.js';
import { checkTable } from './params.js';
import { QUEUE_PARAMS } from './queue.js';
import { SQL_PARAMS } from './sql.js';
import { STORAGE_PARAMS } from './storage.js';
import { SYSLOG_PARAMS } from './syslog.js';

export const ServiceKind = {
  Sql: 'sql',
  Queue: 'queue',
  Gateway: 'gateway',
  Exec: 'exec',
  Syslog: 'syslog',
  HttpClient: 'httpclient',
  Echo: 'echo',
  Storage: 'storage',
  Flow: 'flow',
} as const;
export type ServiceKind = (typeof ServiceKind)[keyof typeof ServiceKind];

export interface ServiceInfo {
  kind: ServiceKind;
  /** Release tag of README, Parameter reference (hivenode's own tools carry the package version's tag). */
  release: string;
  /** One line for help and the README. */
  summary: string;
  params: ParamTable;
  /** Channel listened on when neither INPUTCHANNEL nor NAME is set; '' for services that do not listen. */
  defaultInputChannel: string;
  /** Whether the spec lists it (false for hivenode's diagnostic and storage services). */
  inSpec: boolean;
}

export const SERVICES: Readonly<Record<ServiceKind, ServiceInfo>> = {
  sql: {
    kind: 'sql',
    release: 'v0.1.0',
    summary: 'Runs SELECT, INSERT, UPDATE, DELETE or raw SQL against one database; can poll a SELECT.',
    params: SQL_PARAMS,
    defaultInputChannel: 'sql',
    inSpec: true,
  },
  queue: {
    kind: 'queue',
    release: 'v0.1.1',
    summary: 'Holds entries to send later to a channel, retries, dead-letters; commands and template fan-out.',
    params: QUEUE_PARAMS,
    defaultInputChannel: 'queue',
    inSpec: true,
  },
  gateway: {
    kind: 'gateway',
    release: 'v0.1.0',
    summary: 'Turns every HTTP request into a hive message and the result into the HTTP response.',
    params: GATEWAY_PARAMS,
    defaultInputChannel: '',
    inSpec: true,
  },
  exec: {
    kind: 'exec',
    release: 'v0.1.0',
    summary: 'Runs an operating-system command built by a template from the message Data, without a shell.',
    params: EXEC_PARAMS,
    defaultInputChannel: 'exec',
    inSpec: true,
  },
  syslog: {
    kind: 'syslog',
    release: 'v0.1.0',
    summary: 'Sends syslog messages to a server and/or receives syslog over UDP/TCP into the hive.',
    params: SYSLOG_PARAMS,
    defaultInputChannel: 'syslog',
    inSpec: true,
  },
  httpclient: {
    kind: 'httpclient',
    release: 'v0.1.0',
    summary: 'Sends one HTTP request per message, mapped by interceptor services.',
    params: HTTPCLIENT_PARAMS,
    defaultInputChannel: 'httpclient',
    inSpec: true,
  },
  echo: {
    kind: 'echo',
    release: 'v0.1.0',
    summary: 'Diagnostic: answers with the Data it received; records, delays or fails on demand.',
    params: ECHO_PARAMS,
    defaultInputChannel: 'echo',
    inSpec: false,
  },
  storage: {
    kind: 'storage',
    release: 'v0.1.0',
    summary: 'Serves hive:// templates from a directory on the template channel.',
    params: STORAGE_PARAMS,
    defaultInputChannel: 'DefaultStorageChannel',
    inSpec: false,
  },
  flow: {
    kind: 'flow',
    release: 'v0.1.0',
    summary:
      'Runs a durable flow of steps per message: calls, choices, retries, compensation; every step kept and resumed after a crash.',
    params: FLOW_PARAMS,
    defaultInputChannel: 'flow',
    inSpec: false,
  },
};

for (const info of Object.values(SERVICES)) checkTable(info.kind, info.params);

export function isServiceKind(name: string): name is ServiceKind {
  return Object.hasOwn(SERVICES, name);
}
