/**
 * Logging (docs/ARCHITECTURE.md, Supervision and observability): winston, honouring LOGLEVEL,
 * LOGFORMAT ('TEXT/DEFAULT' or 'JSON') and LOGSENSITIVE. Unless LOGSENSITIVE is true, the values of
 * secret parameters and anything that looks like credentials (Authorization headers, Basic/Bearer
 * tokens, password fields) are masked. A line written while a message is handled carries the
 * message's `trace_id` (docs/ARCHITECTURE.md, Tracing), in TEXT and JSON alike.
 */
import winston from 'winston';
import { currentScope } from './trace-scope.js';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

/** What a service or actor logs through. */
export interface Logger {
  trace(message: string, meta?: Record<string, unknown>): void;
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  error(message: string, meta?: Record<string, unknown>): void;
  /** A logger whose lines carry these fields too (for example the service name). */
  child(fields: Record<string, unknown>): Logger;
}

export interface LogOptions {
  level?: string;
  format?: string;
  sensitive?: boolean;
  /** Secret values to mask (parameter values marked secret). */
  secrets?: readonly string[];
  /** Where lines go; standard output by default. */
  stream?: NodeJS.WritableStream;
}

const LEVELS = { error: 0, warn: 1, info: 2, debug: 3, trace: 4 } as const;
const MASK = '***';
const CREDENTIAL_PATTERNS: RegExp[] = [
  /\b(authorization|proxy-authorization)(["']?\s*[:=]\s*["']?)([^"',\r\n}]+)/gi,
  /\b(Basic|Bearer|Token)\s+[A-Za-z0-9._~+/=-]{6,}/g,
  /\b(password|passwd|secret|token|api[_-]?key)(["']?\s*[:=]\s*["']?)([^"',\s}&]+)/gi,
];

/** Masks secret values and credential-looking text. Exported for tests and other sinks. */
export function maskSensitive(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 3) out = out.split(s).join(MASK);
  out = out.replace(CREDENTIAL_PATTERNS[0]!, (_m, name: string, sep: string) => `${name}${sep}${MASK}`);
  out = out.replace(CREDENTIAL_PATTERNS[1]!, (_m, scheme: string) => `${scheme} ${MASK}`);
  out = out.replace(CREDENTIAL_PATTERNS[2]!, (_m, name: string, sep: string) => `${name}${sep}${MASK}`);
  return out;
}

function normaliseLevel(level: string | undefined): LogLevel {
  const l = (level ?? '').toLowerCase();
  return l === 'trace' || l === 'debug' || l === 'warn' || l === 'error' ? l : 'info';
}

/** The line's fields with the trace of the message being handled, if any (read when the line is written). */
function traced(meta: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const traceId = currentScope()?.traceId;
  return traceId === undefined ? meta : { ...meta, trace_id: traceId };
}

class WinstonLogger implements Logger {
  constructor(private readonly w: winston.Logger) {}
  trace(message: string, meta?: Record<string, unknown>): void {
    this.w.log('trace', message, traced(meta));
  }
  debug(message: string, meta?: Record<string, unknown>): void {
    if (this.w.isDebugEnabled()) this.w.debug(message, traced(meta));
  }
  info(message: string, meta?: Record<string, unknown>): void {
    this.w.info(message, traced(meta));
  }
  warn(message: string, meta?: Record<string, unknown>): void {
    this.w.warn(message, traced(meta));
  }
  error(message: string, meta?: Record<string, unknown>): void {
    this.w.error(message, traced(meta));
  }
  child(fields: Record<string, unknown>): Logger {
    return new WinstonLogger(this.w.child(fields));
  }
}

/** Creates the node's root logger. */
export function createLogger(opts: LogOptions = {}): Logger {
  const sensitive = opts.sensitive === true;
  const secrets = opts.secrets ?? [];
  const mask = winston.format((info) => {
    if (sensitive) return info;
    info.message = maskSensitive(String(info.message), secrets);
    for (const key of Object.keys(info)) {
      if (key === 'level' || key === 'message') continue;
      const v = info[key];
      if (/^(authorization|password|secret|token|credentials?)$/i.test(key)) info[key] = MASK;
      else if (typeof v === 'string') info[key] = maskSensitive(v, secrets);
    }
    return info;
  });
  const json = (opts.format ?? '').toUpperCase() === 'JSON';
  const text = winston.format.printf((info) => {
    const { level, message, timestamp, service, trace_id: traceId, ...rest } = info as Record<string, unknown>;
    const extra = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : '';
    const trace = typeof traceId === 'string' ? ` trace_id=${traceId}` : '';
    return `${String(timestamp)} ${String(level).toUpperCase().padEnd(5)} ${service ? `[${String(service)}] ` : ''}${String(message)}${trace}${extra}`;
  });
  const w = winston.createLogger({
    levels: LEVELS,
    level: normaliseLevel(opts.level),
    format: winston.format.combine(mask(), winston.format.timestamp(), json ? winston.format.json() : text),
    transports: [opts.stream ? new winston.transports.Stream({ stream: opts.stream }) : new winston.transports.Console()],
  });
  return new WinstonLogger(w);
}

/** A logger that drops everything (benchmarks, some tests). */
export function silentLogger(): Logger {
  const l: Logger = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, child: () => l };
  return l;
}
