/**
 * Tracing settings of a node (docs/ARCHITECTURE.md, Tracing): the standard OpenTelemetry variables,
 * and the node file's `tracing:` section that mirrors them key for key (the section wins where it
 * sets a key). Compiled once at start: a value that is not accepted stops the start naming where
 * it came from, never a node that silently exports nothing.
 */
import { ConfigError } from '../protocol/errors.js';

const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type SamplerName = (typeof SAMPLERS)[number];
/** The OTLP/HTTP encodings (OTEL_EXPORTER_OTLP_PROTOCOL); protobuf is the specification's default. */
const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

export interface TracingSettings {
  /** The OTLP/HTTP traces URL spans are sent to; '' exports nothing (and records no span). */
  endpoint: string;
  /** How spans are encoded on the wire (OTEL_EXPORTER_OTLP_PROTOCOL). */
  protocol: OtlpProtocol;
  /** Headers sent with every export (OTEL_EXPORTER_OTLP_HEADERS). */
  headers: Record<string, string>;
  /** The resource's service.name. */
  serviceName: string;
  sampler: SamplerName;
  /** The ratio of the traceidratio samplers, 0 to 1. */
  samplerArg: number;
  /** Whether trace context travels at all (OTEL_PROPAGATORS=none: no traceparent anywhere). */
  propagate: boolean;
}

/** The node file's tracing keys and the variable each mirrors (README, Tracing). */
export const TRACING_KEYS = {
  endpoint: 'OTEL_EXPORTER_OTLP_ENDPOINT',
  tracesEndpoint: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  headers: 'OTEL_EXPORTER_OTLP_HEADERS',
  protocol: 'OTEL_EXPORTER_OTLP_PROTOCOL',
  tracesProtocol: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  serviceName: 'OTEL_SERVICE_NAME',
  sampler: 'OTEL_TRACES_SAMPLER',
  samplerArg: 'OTEL_TRACES_SAMPLER_ARG',
  exporter: 'OTEL_TRACES_EXPORTER',
  propagators: 'OTEL_PROPAGATORS',
  disabled: 'OTEL_SDK_DISABLED',
} as const;
export type TracingKey = keyof typeof TRACING_KEYS;

/** The settings of a node that exports nothing and carries trace context (no variable set). */
export const DEFAULT_TRACING: TracingSettings = Object.freeze({
  endpoint: '',
  protocol: 'http/protobuf',
  headers: {},
  serviceName: 'hivenode',
  sampler: 'parentbased_always_on',
  samplerArg: 1,
  propagate: true,
});

/** The tracing key a node-file key names (any letter case), or undefined. */
export function tracingKey(name: string): TracingKey | undefined {
  return (Object.keys(TRACING_KEYS) as TracingKey[]).find((k) => k.toLowerCase() === name.toLowerCase());
}

function httpUrl(value: string, where: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${where} '${value}' is not a URL; expected http://host:port or https://host:port`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(`${where} '${value}' must be an http:// or https:// URL (OTLP over HTTP)`);
  return value;
}

/** `k=v,k2=v2` (values percent-decoded, as the OpenTelemetry specification writes them). */
function parseHeaders(text: string, where: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    const name = eq < 0 ? '' : part.slice(0, eq).trim();
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
      throw new ConfigError(`${where}: '${part.trim().replace(/=.*/, '=…')}' is not name=value`);
    let value: string;
    try {
      value = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      throw new ConfigError(`${where}: the value of '${name}' has a malformed %-escape`);
    }
    if (/[\r\n\0]/.test(value)) throw new ConfigError(`${where}: the value of '${name}' contains a line break`);
    // written into the request's head as it is (actors/observe/otlp-transport.ts): printable ASCII and tabs only
    if (/[^\t\x20-\x7e]/.test(value))
      throw new ConfigError(
        `${where}: the value of '${name}' has a character an HTTP header cannot carry (printable ASCII only)`,
      );
    out[name] = value;
  }
  return out;
}

/**
 * The settings from the environment and an optional node-file section (its keys already matched
 * to TracingKey, values expanded); `source` names the section in messages.
 */
export function compileTracing(
  env: NodeJS.ProcessEnv,
  section: Partial<Record<TracingKey, string>> = {},
  source = 'tracing',
): TracingSettings {
  const value = (key: TracingKey): { text: string; where: string } | undefined => {
    const own = section[key];
    if (own !== undefined) return { text: own.trim(), where: `${source}.${key}` };
    const v = env[TRACING_KEYS[key]];
    return v === undefined || v.trim() === '' ? undefined : { text: v.trim(), where: TRACING_KEYS[key] };
  };
  const flag = (key: TracingKey): boolean => {
    const v = value(key);
    if (v === undefined || v.text === '') return false;
    if (/^(true|false)$/i.test(v.text)) return v.text.toLowerCase() === 'true';
    throw new ConfigError(`${v.where} must be true or false, got '${v.text}'`);
  };

  const propagators = value('propagators');
  let propagate = true;
  if (propagators && propagators.text !== '') {
    const names = propagators.text
      .split(',')
      .map((p) => p.trim().toLowerCase())
      .filter(Boolean);
    const unknown = names.filter((p) => !['tracecontext', 'baggage', 'none'].includes(p));
    if (unknown.length > 0)
      throw new ConfigError(
        `${propagators.where} names ${unknown.join(', ')}; hivenode carries W3C trace context only: use tracecontext (or none)`,
      );
    propagate = names.includes('tracecontext');
  }

  const exporter = value('exporter');
  const exporterName = exporter?.text.toLowerCase() ?? 'otlp';
  if (!['otlp', 'none', ''].includes(exporterName))
    throw new ConfigError(`${exporter!.where} '${exporter!.text}' is not accepted; expected otlp or none`);
  let endpoint = '';
  const traces = value('tracesEndpoint');
  const base = value('endpoint');
  if (traces && traces.text !== '') endpoint = httpUrl(traces.text, traces.where);
  else if (base && base.text !== '') endpoint = `${httpUrl(base.text, base.where).replace(/\/+$/, '')}/v1/traces`;
  // nothing recorded where nothing can travel: spans need the context that links them
  if (flag('disabled') || exporterName === 'none' || !propagate) endpoint = '';

  const samplerValue = value('sampler');
  const sampler = (samplerValue?.text.toLowerCase() || 'parentbased_always_on') as SamplerName;
  if (!SAMPLERS.includes(sampler))
    throw new ConfigError(
      `${samplerValue!.where} '${samplerValue!.text}' is not accepted; expected one of ${SAMPLERS.join(', ')}`,
    );
  const argValue = value('samplerArg');
  let samplerArg = 1;
  if (argValue && argValue.text !== '') {
    samplerArg = /^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(argValue.text) ? Number(argValue.text) : NaN;
    if (!(samplerArg >= 0 && samplerArg <= 1))
      throw new ConfigError(`${argValue.where} must be a ratio from 0 to 1, got '${argValue.text}'`);
  }
  const protocolValue = value('tracesProtocol') ?? value('protocol');
  const protocolName = protocolValue?.text.toLowerCase() || 'http/protobuf';
  const protocol = protocolName as OtlpProtocol;
  if (!OTLP_PROTOCOLS.includes(protocol)) {
    const grpc = protocolName === 'grpc' ? ': hivenode exports OTLP over HTTP only' : '';
    throw new ConfigError(
      `${protocolValue!.where} '${protocolValue!.text}' is not accepted${grpc}; expected ${OTLP_PROTOCOLS.join(' or ')}`,
    );
  }
  const headers = value('headers');
  return {
    endpoint,
    protocol,
    headers: headers ? parseHeaders(headers.text, headers.where) : {},
    serviceName: value('serviceName')?.text || DEFAULT_TRACING.serviceName,
    sampler,
    samplerArg,
    propagate,
  };
}
