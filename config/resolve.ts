/**
 * The one compile step of configuration (docs/ARCHITECTURE.md, Configuration): raw layers of text
 * values in, a typed, validated configuration with defaults applied out; nothing re-validates
 * later. Errors name the parameter, where its value came from and what is accepted, and stop the
 * start (exit code 2).
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, describeError } from '../protocol/errors.js';
import { emptyRecord } from '../protocol/message.js';
import type { ConfigOf, ParamSpec, ParamTable } from './params.js';
import { ParamType, expandCtrl } from './params.js';
import { parseBool, parseDuration, parseInt10 } from './values.js';

/** One source of values, for example the environment or one entry of a node file. */
export interface Layer {
  /** Where the values came from, for error messages: 'command line', 'node.yaml services[1]'. */
  source: string;
  /**
   * Parameter name as written by the user → value text; undefined for a flag given bare on the
   * command line, which only a boolean accepts (as true): whether a bare flag is a mistake depends
   * on the parameter's type, which only the table knows.
   */
  values: ReadonlyArray<readonly [string, string | undefined]>;
  /** Names not in the table are ignored (the environment) instead of refused. */
  ignoreUnknown?: boolean;
}

/** A compiled configuration and what the user set explicitly. */
export interface Compiled<C> {
  values: C;
  /** Spec names of the parameters given by some layer (not defaults). */
  explicit: ReadonlySet<string>;
  /** Values of secret parameters, for masking in logs. */
  secrets: string[];
}

const OS_TEMP = '<OS temp directory>';

function acceptedValues(p: ParamSpec): string {
  switch (p.type) {
    case ParamType.Bool:
      return 'true or false';
    case ParamType.Int:
      return `a whole number${p.min !== undefined ? ` from ${p.min}` : ''}${p.max !== undefined ? ` to ${p.max}` : ''}`;
    case ParamType.Duration:
      return `a duration such as 250ms, 20s, 5m, 1h (a plain number is ${p.unit === 'ms' ? 'milliseconds' : 'seconds'})`;
    case ParamType.Enum:
      return `one of ${(p.values ?? []).join(', ')}`;
    case ParamType.String:
      return 'text';
  }
}

/** Reads `file://<path>` secrets (trimmed); other values are returned as they are. */
export function readSecret(value: string, name: string, source: string): string {
  if (!value.startsWith('file://')) return value;
  const path = value.slice('file://'.length);
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (e) {
    throw new ConfigError(
      `${name} (${source}): cannot read secret file '${path}': ${(e as NodeJS.ErrnoException).code ?? describeError(e)}`,
    );
  }
}

function convert(p: ParamSpec, text: string, source: string): unknown {
  try {
    switch (p.type) {
      case ParamType.String:
        return text;
      case ParamType.Bool:
        return parseBool(text);
      case ParamType.Int:
        return parseInt10(text, p.min, p.max);
      case ParamType.Duration:
        return parseDuration(text, p.unit ?? 's');
      case ParamType.Enum: {
        if (text === '') return '';
        const hit = p.values?.find((v) => v.toLowerCase() === text.trim().toLowerCase());
        if (hit === undefined) throw new Error(`'${text}' is not accepted`);
        return hit;
      }
    }
  } catch (e) {
    throw new ConfigError(`${p.name} (${source}): ${describeError(e)}; expected ${acceptedValues(p)}`);
  }
}

/** The default text of `p`; `compiled` holds the values of the parameters before it (for `defaultBy`). */
function defaultText(p: ParamSpec, compiled: Readonly<Record<string, unknown>>): string {
  const d = (p.defaultBy ? p.defaultBy.values[compiled[p.defaultBy.param] as string] : undefined) ?? p.default ?? '';
  return d.includes(OS_TEMP) ? join(tmpdir(), d.slice(d.indexOf(OS_TEMP) + OS_TEMP.length)) : d;
}

/** Compiles layers (earlier first, later wins) against a table for service `kind`. */
export function compileConfig<const T extends ParamTable>(
  kind: string,
  table: T,
  layers: readonly Layer[],
): Compiled<ConfigOf<T>> {
  const specs = expandCtrl(table);
  const byName = new Map(specs.map((p) => [p.name.toLowerCase(), p]));
  const chosen = new Map<string, { text: string; source: string }>();
  for (const layer of layers) {
    for (const [rawName, text] of layer.values) {
      const spec = byName.get(rawName.toLowerCase());
      if (!spec) {
        if (layer.ignoreUnknown) continue;
        throw new ConfigError(
          `unknown parameter '${rawName}' (${layer.source}) for service ${kind}; its parameters are: ${specs.map((p) => p.name).join(', ')}`,
        );
      }
      if (text === undefined && spec.type !== ParamType.Bool) {
        throw new ConfigError(
          `parameter ${spec.name} needs a value (${layer.source}): write -${spec.name}=<value> (${acceptedValues(spec)}); only true/false parameters may be given bare`,
        );
      }
      chosen.set(spec.name, { text: text ?? 'true', source: layer.source });
    }
  }
  const values = emptyRecord<unknown>();
  const secrets: string[] = [];
  for (const p of specs) {
    const given = chosen.get(p.name);
    let text = given ? given.text : defaultText(p, values);
    const source = given ? given.source : 'default';
    if (p.secret && given) {
      if (!p.watchedFile) text = readSecret(text, p.name, source);
      if (text !== '') secrets.push(text);
    }
    if (p.mandatory && text.trim() === '')
      throw new ConfigError(`${p.name} is mandatory for service ${kind} and was not given`);
    values[p.name] = convert(p, text, source);
  }
  return { values: Object.freeze(values) as ConfigOf<T>, explicit: new Set(chosen.keys()), secrets };
}

/** The environment as a layer: every variable whose upper-case name is a parameter's upper-case name. */
/** The compile step of one service kind's table, as the kind's service definition holds it. */
export function compilerFor<const T extends ParamTable>(
  kind: string,
  table: T,
): (layers: readonly Layer[]) => Compiled<ConfigOf<T>> {
  return (layers) => compileConfig(kind, table, layers);
}

export function environmentLayer(env: NodeJS.ProcessEnv, table: ParamTable): Layer {
  const names = new Set(expandCtrl(table).map((p) => p.name.toUpperCase()));
  const values: [string, string][] = [];
  for (const [k, v] of Object.entries(env)) if (v !== undefined && names.has(k)) values.push([k, v]);
  return { source: 'environment', values, ignoreUnknown: true };
}

/**
 * Spec-style command line: `-Name=value`, `-Name value`, `--name=value`, `--name value`; a flag with
 * no value (followed by another option or nothing) is bare: true for a boolean, refused for any other
 * type by compileConfig (a bare `-NAME` must not start a service named 'true'). Anything else is an error.
 */
export function commandLineLayer(args: readonly string[]): Layer {
  const values: [string, string | undefined][] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const m = /^--?([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?$/s.exec(arg);
    if (!m)
      throw new ConfigError(
        `unexpected argument '${arg}' (command line); parameters are written -Name=value or -Name value`,
      );
    const name = m[1]!;
    if (m[2] !== undefined) {
      values.push([name, m[2]]);
      continue;
    }
    const next = args[i + 1];
    if (next === undefined || /^--?[A-Za-z_]/.test(next)) {
      values.push([name, undefined]);
    } else {
      values.push([name, next]);
      i++;
    }
  }
  return { source: 'command line', values };
}
