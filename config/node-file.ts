/**
 * The node file (YAML or JSON) that `hivenode run` reads:
 *   {hive: {SERVERHOST, SERVERAUTH, SERVERCA, SERVERCERT, SERVERKEY}, dashboard: {Port, Host, Users, Hosts}, tracing: {endpoint, …}, services: [{service: <kind>, NAME: …, <Param>: value}]}
 * Values may use `${VAR}` to take an environment variable (`$$` is a literal `$`); the environment is
 * otherwise NOT read, so one service's variables never leak into every service of a node (the
 * standard OTEL_* variables excepted: tracing is the node's, config/tracing.ts).
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { createRequire } from 'node:module';
import type * as yamlModule from 'yaml';
import { ConfigError, describeError } from '../protocol/errors.js';
import type { Layer } from './resolve.js';
import type { ServiceKind } from './registry.js';
import type { TracingKey } from './tracing.js';
import { TRACING_KEYS, tracingKey } from './tracing.js';
import { SERVICES, isServiceKind } from './registry.js';

/** The keys of the node file's hive section: the common parameters that say how to reach the hive. */
const HIVE_KEYS = ['SERVERHOST', 'SERVERAUTH', 'SERVERCA', 'SERVERCERT', 'SERVERKEY'] as const;

/** One service instance of a node file, as layers ready for compileConfig. */
interface ServiceEntry {
  kind: ServiceKind;
  /** Position in the file, for messages: `node.yaml services[2]`. */
  where: string;
  layer: Layer;
}

export interface NodeFile {
  /** The node's name on the dashboard and in `hivenode status`: the file's name without its extension. */
  name: string;
  /** Hive connection shared by every service (each service may still override). */
  hive: Layer;
  services: ServiceEntry[];
  /** Dashboard port, when the node file switches it on. */
  dashboardPort?: number;
  /** The tracing section's values by key (config/tracing.ts compiles them with the OTEL_* variables). */
  tracing: Partial<Record<TracingKey, string>>;
  /** The console's address (dashboard.Host, default 127.0.0.1) and users file (dashboard.Users; none: read-only). */
  dashboardAccess?: DashboardAccess;
}

/** Who may reach the console and who may act in it: node-file dashboard.Host and dashboard.Users. */
export interface DashboardAccess {
  /** The address the console binds; 127.0.0.1 unless configured otherwise. */
  host?: string;
  /** An htpasswd-style users file (the gateway's Users format); without one the console is read-only. */
  users?: string;
  /** dashboard.Hosts: the names the console answers to, comma-separated (`*`: any); node/console/hosts.ts has the default. */
  hosts?: string;
}

const DASHBOARD_KEYS = ['Port', 'Host', 'Users', 'Hosts'] as const;

/**
 * The dashboard's port from the node file's dashboard.Port or the --dashboard-port option (`what`
 * names which); a missing or malformed value is refused, never silently no dashboard.
 */
export function parseDashboardPort(text: string | undefined, what: string): number {
  if (text === undefined || text.trim() === '')
    throw new ConfigError(`${what} needs a value: a port number from 0 to 65535`);
  const n = /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(n) || n > 65535)
    throw new ConfigError(`${what} must be a port number from 0 to 65535, got '${text}'`);
  return n;
}

/** Expands `${VAR}` from `env`; an unset variable is an error naming it. */
function expandVariables(text: string, env: NodeJS.ProcessEnv, where: string): string {
  return text.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string | undefined) => {
    if (whole === '$$') return '$';
    const v = env[name!];
    if (v === undefined) throw new ConfigError(`${where}: environment variable ${name} is not set`);
    return v;
  });
}

function scalarText(v: unknown, where: string): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null) return '';
  throw new ConfigError(`${where} must be a text, number or boolean, got ${Array.isArray(v) ? 'a list' : typeof v}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The YAML parser, required when a YAML file is read: a JSON node file (JSON.parse) never loads its
 * 70 modules. Required, not imported, so parsing stays synchronous; `yaml` is the same package either way.
 */
function parseYaml(text: string): unknown {
  return (createRequire(import.meta.url)('yaml') as typeof yamlModule).parse(text);
}

/** Parses node-file text; `file` is used in messages and to choose YAML or JSON. */
export function parseNodeFile(text: string, file: string, env: NodeJS.ProcessEnv = process.env): NodeFile {
  const name = basename(file);
  let doc: unknown;
  try {
    doc = /\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text);
  } catch (e) {
    // the parser's first line says what and where; the lines after it (a code frame) would break the one-line message
    throw new ConfigError(
      `${name}: not valid ${/\.json$/i.test(file) ? 'JSON' : 'YAML'}: ${describeError(e).split('\n')[0]!.replace(/:$/, '')}`,
    );
  }
  if (!isObject(doc)) throw new ConfigError(`${name}: expected an object with a 'services' list`);
  for (const key of Object.keys(doc)) {
    if (!['hive', 'services', 'dashboard', 'tracing'].includes(key))
      throw new ConfigError(`${name}: unknown top-level key '${key}'; expected hive, services, dashboard, tracing`);
  }
  const valuesOf = (obj: Record<string, unknown>, where: string, skip: string[] = []): [string, string][] =>
    Object.entries(obj)
      .filter(([k]) => !skip.includes(k))
      .map(([k, v]) => [k, expandVariables(scalarText(v, `${where}.${k}`), env, `${where}.${k}`)] as [string, string]);

  const hiveRaw = doc.hive ?? {};
  if (!isObject(hiveRaw)) throw new ConfigError(`${name}: hive must be an object with ${HIVE_KEYS.join(', ')}`);
  for (const k of Object.keys(hiveRaw)) {
    if (!HIVE_KEYS.includes(k.toUpperCase() as (typeof HIVE_KEYS)[number]))
      throw new ConfigError(`${name}: unknown hive key '${k}'; expected ${HIVE_KEYS.join(', ')}`);
  }
  const hive: Layer = { source: `${name} hive`, values: valuesOf(hiveRaw, `${name} hive`) };

  let dashboardPort: number | undefined;
  let dashboardAccess: DashboardAccess | undefined;
  if (doc.dashboard !== undefined) {
    const d = doc.dashboard;
    if (!isObject(d)) throw new ConfigError(`${name}: dashboard must be an object with ${DASHBOARD_KEYS.join(', ')}`);
    const text = (key: (typeof DASHBOARD_KEYS)[number]): string | undefined => {
      const v = Object.entries(d).find(([k]) => k.toLowerCase() === key.toLowerCase())?.[1];
      return v === undefined
        ? undefined
        : expandVariables(scalarText(v, `${name} dashboard.${key}`), env, `${name} dashboard.${key}`);
    };
    for (const k of Object.keys(d)) {
      if (!DASHBOARD_KEYS.some((known) => known.toLowerCase() === k.toLowerCase()))
        throw new ConfigError(`${name}: unknown dashboard key '${k}'; expected ${DASHBOARD_KEYS.join(', ')}`);
    }
    dashboardPort = parseDashboardPort(text('Port'), `${name}: dashboard.Port`);
    const host = text('Host')?.trim();
    const users = text('Users')?.trim();
    const hosts = text('Hosts')?.trim();
    if (host !== undefined || users !== undefined || hosts !== undefined)
      dashboardAccess = { ...(host ? { host } : {}), ...(users ? { users } : {}), ...(hosts ? { hosts } : {}) };
  }

  const tracing: Partial<Record<TracingKey, string>> = {};
  if (doc.tracing !== undefined && doc.tracing !== null) {
    if (!isObject(doc.tracing))
      throw new ConfigError(`${name}: tracing must be an object with ${Object.keys(TRACING_KEYS).join(', ')}`);
    for (const [k, v] of valuesOf(doc.tracing, `${name} tracing`)) {
      const key = tracingKey(k);
      if (key === undefined)
        throw new ConfigError(`${name}: unknown tracing key '${k}'; expected ${Object.keys(TRACING_KEYS).join(', ')}`);
      tracing[key] = v;
    }
  }

  if (!Array.isArray(doc.services) || doc.services.length === 0)
    throw new ConfigError(`${name}: 'services' must be a non-empty list`);
  const services = doc.services.map((raw: unknown, i: number): ServiceEntry => {
    const where = `${name} services[${i}]`;
    if (!isObject(raw)) throw new ConfigError(`${where} must be an object with a 'service' key`);
    const kindKey = Object.keys(raw).find((k) => k.toLowerCase() === 'service');
    const kind = kindKey === undefined ? undefined : raw[kindKey];
    if (typeof kind !== 'string' || !isServiceKind(kind)) {
      throw new ConfigError(
        `${where}: 'service' must be one of ${Object.keys(SERVICES).join(', ')}, got ${JSON.stringify(kind) ?? 'nothing'}`,
      );
    }
    return { kind, where, layer: { source: where, values: valuesOf(raw, where, [kindKey!]) } };
  });
  return {
    name: name.replace(/\.(ya?ml|json)$/i, ''),
    hive,
    services,
    tracing,
    ...(dashboardPort === undefined ? {} : { dashboardPort }),
    ...(dashboardAccess === undefined ? {} : { dashboardAccess }),
  };
}

/** A node file's text; a file that cannot be read is a ConfigError naming it. */
export function readNodeText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read node file '${file}': ${(e as NodeJS.ErrnoException).code ?? describeError(e)}`);
  }
}

/** Reads and parses a node file. */
export function loadNodeFile(file: string, env: NodeJS.ProcessEnv = process.env): NodeFile {
  return parseNodeFile(readNodeText(file), file, env);
}
