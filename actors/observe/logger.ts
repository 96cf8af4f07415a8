/**
 * Logging (docs/ARCHITECTURE.md, Supervision and observability): lines as winston wrote them, honouring LOGLEVEL,
 * LOGFORMAT ('TEXT/DEFAULT' or 'JSON') and LOGSENSITIVE. Unless LOGSENSITIVE is true, the values of
 * secret parameters and anything that looks like credentials (Authorization headers, Basic/Bearer
 * tokens, password fields) are masked. A line written while a message is handled carries the
 * message's `trace_id` (docs/ARCHITECTURE.md, Tracing), in TEXT and JSON alike.
 */
import { EOL } from 'node:os';
import { stableJson } from '../shared/stable-json.js';
import { currentScope } from './trace-scope.js';

type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

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

/**
 * A printf placeholder: winston (whose lines these are, field for field) left a line's fields out
 * when its message had one and no format expanded it.
 */
const PLACEHOLDER = /%[scdjifoO%]/;

/** Where a node's loggers write, and how: what createLogger compiled from the options. */
interface Sink {
  readonly threshold: number;
  readonly json: boolean;
  /** Masks a line's fields in place; undefined with LOGSENSITIVE. */
  readonly mask: ((line: Record<string, unknown>) => void) | undefined;
  readonly stream: NodeJS.WritableStream;
}

/** A line as TEXT: time, level, [service], message, trace, then the other fields as JSON. */
function textLine(line: Record<string, unknown>): string {
  const { level, message, timestamp, service, trace_id: traceId, ...rest } = line;
  const extra = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : '';
  const trace = typeof traceId === 'string' ? ` trace_id=${traceId}` : '';
  return `${String(timestamp)} ${String(level).toUpperCase().padEnd(5)} ${service ? `[${String(service)}] ` : ''}${String(message)}${trace}${extra}`;
}

/**
 * Lines written as winston wrote them (its key order, masking, timestamp, TEXT and JSON shapes),
 * without loading winston and its forty modules: a seventh of a node's start-up time.
 */
class StreamLogger implements Logger {
  constructor(
    private readonly sink: Sink,
    /** A child's fields (outer children's first), before each line's own. */
    private readonly fields: Record<string, unknown> | undefined,
  ) {}
  trace(message: string, meta?: Record<string, unknown>): void {
    this.write('trace', message, meta);
  }
  debug(message: string, meta?: Record<string, unknown>): void {
    this.write('debug', message, meta);
  }
  info(message: string, meta?: Record<string, unknown>): void {
    this.write('info', message, meta);
  }
  warn(message: string, meta?: Record<string, unknown>): void {
    this.write('warn', message, meta);
  }
  error(message: string, meta?: Record<string, unknown>): void {
    this.write('error', message, meta);
  }
  child(fields: Record<string, unknown>): Logger {
    return new StreamLogger(this.sink, Object.assign({}, this.fields, fields));
  }

  private write(level: LogLevel, message: string, meta: Record<string, unknown> | undefined): void {
    const sink = this.sink;
    if (LEVELS[level] > sink.threshold) return;
    const fields = traced(meta);
    let line: Record<string, unknown>;
    if (typeof fields === 'object' && fields !== null && !PLACEHOLDER.test(message)) {
      line = Object.assign({}, fields, { level, message });
      // an Error's message, stack and cause are not enumerable: winston took them over explicitly
      if (fields.message) line.message = `${message} ${String(fields.message)}`;
      if (fields.stack) line.stack = fields.stack;
      if (fields.cause) line.cause = fields.cause;
    } else {
      line = { level, message };
    }
    if (this.fields) line = Object.assign({}, this.fields, line);
    sink.mask?.(line);
    line.timestamp ||= new Date().toISOString();
    sink.stream.write(`${sink.json ? stableJson(line) : textLine(line)}${EOL}`);
  }
}

/** Creates the node's root logger. */
export function createLogger(opts: LogOptions = {}): Logger {
  const secrets = opts.secrets ?? [];
  const mask = (line: Record<string, unknown>): void => {
    line.message = maskSensitive(String(line.message), secrets);
    for (const key of Object.keys(line)) {
      if (key === 'level' || key === 'message') continue;
      const v = line[key];
      if (/^(authorization|password|secret|token|credentials?)$/i.test(key)) line[key] = MASK;
      else if (typeof v === 'string') line[key] = maskSensitive(v, secrets);
    }
  };
  const sink: Sink = {
    threshold: LEVELS[normaliseLevel(opts.level)],
    json: (opts.format ?? '').toUpperCase() === 'JSON',
    mask: opts.sensitive === true ? undefined : mask,
    stream: opts.stream ?? process.stdout,
  };
  return new StreamLogger(sink, undefined);
}

/** A logger that drops everything (benchmarks, some tests). */
export function silentLogger(): Logger {
  const l: Logger = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, child: () => l };
  return l;
}
