/**
 * The exec dialect (README, The exec service): {{ }} templates that build a command and its arguments from the
 * request Data (dot is {Data}). The command is later run without a shell, so the template output
 * itself is only informative; setCmd and addArg collect what runs.
 *
 * Choices where the spec names a function without defining it:
 * - marshal is Go's json.Marshal (compact, sorted keys, <, > and & escaped as \u003c...);
 *   marshalIndent is json.MarshalIndent(v, "", "  "): two spaces, no prefix.
 * - replaceLine / replaceLineAndIdent replace every line containing the text and keep "\r\n"
 *   endings; the "Ident" variant keeps the replaced line's leading spaces and tabs.
 * - string(v) is Go's %v; niltoblank(v) is '' for nil or missing, else %v.
 * - env(name) reads the injected environment (ExecRenderOptions.env, default process.env); unset
 *   names give ''.
 * - set/get use a scratch map private to one render; get of an unset key is nil (<no value>).
 */
import { Param, FuncError } from '../funcs.js';
import type { FuncMap } from '../funcs.js';
import { valueString } from '../exec.js';
import { Kind, kindOf, sliceItems, isForbiddenName } from '../values.js';
import { marshalJSON } from './json.js';
import { replaceAll, split, after, replaceLines } from './text-funcs.js';
import { CompiledCache } from './cache.js';
import { DialectTemplate, dialectCacheKey } from './dialect-template.js';
import type { DialectOptions } from './dialect-template.js';
import { charsOf } from '../budget.js';
import type { RenderBudget } from '../budget.js';
import type { ValueMap } from '../../protocol/message.js';

export const EXEC_DELIMS: [string, string] = ['{{', '}}'];
/** Default cap on arguments one render may add. */
export const DEFAULT_MAX_ARGS = 10_000;

/** Where env() reads variables; the exec service passes an allow-listed object. */
export type EnvSource = Readonly<Record<string, string | undefined>>;

/** Options of an exec template (delimiters default to {{ }}, the name to 'exec'). */
export interface ExecRenderOptions extends DialectOptions {
  /** Variables env() can read; default process.env. */
  env?: EnvSource;
  /** Argument limit; default 10000. */
  maxArgs?: number;
}

export interface ExecRenderResult {
  /** The command set with setCmd, if any. */
  command: string | undefined;
  args: string[];
  output: string;
}

interface ExecContext {
  command: string | undefined;
  args: string[];
  scratch: Map<string, unknown>;
  env: EnvSource;
  maxArgs: number;
}

/** What a value kept in the scratch map costs: its length when it is a string. */
function scratchChars(v: unknown): number {
  return typeof v === 'string' ? v.length : 0;
}

function argStrings(v: unknown): string[] {
  const k = kindOf(v);
  if (k === Kind.Slice) return sliceItems(v).map((x) => (typeof x === 'string' ? x : valueString(x)));
  if (k === Kind.Map || k === Kind.Invalid || k === Kind.Nil || k === Kind.Func)
    throw new FuncError(`addArg: cannot add a value of this type`);
  return [typeof v === 'string' ? v : valueString(v)];
}

/** The names of the exec dialect's own functions (for a hint where another dialect meets one). */
export function execFuncNames(): readonly string[] {
  return Object.keys(execFuncs(() => ({}) as ExecContext));
}

function execFuncs(ctx: () => ExecContext): FuncMap {
  const S = Param.String;
  const A = Param.Any;
  const I = Param.Int;
  return {
    setCmd: {
      fn: (s: string) => {
        ctx().command = s;
        return true;
      },
      params: [S],
    },
    addArg: {
      fn: (budget: RenderBudget, v: unknown) => {
        const c = ctx();
        const add = argStrings(v);
        if (c.args.length + add.length > c.maxArgs) throw new FuncError(`addArg: more than ${c.maxArgs} arguments`);
        budget.charge(charsOf(add), add.length);
        for (const a of add) c.args.push(a);
        return true;
      },
      params: [A],
      budget: true,
    },
    plus: {
      fn: (a: number | bigint, b: number | bigint) =>
        typeof a === 'bigint' || typeof b === 'bigint' ? BigInt(a) + BigInt(b) : a + b,
      params: [I, I],
    },
    minus: {
      fn: (a: number | bigint, b: number | bigint) =>
        typeof a === 'bigint' || typeof b === 'bigint' ? BigInt(a) - BigInt(b) : a - b,
      params: [I, I],
    },
    replace: {
      fn: (b: RenderBudget, input: string, from: string, to: string) => replaceAll(input, from, to, b),
      params: [S, S, S],
      budget: true,
    },
    replaceLine: {
      fn: (b: RenderBudget, input: string, search: string, line: string) => replaceLines(input, search, line, false, b),
      params: [S, S, S],
      budget: true,
    },
    replaceLineAndIdent: {
      fn: (b: RenderBudget, input: string, search: string, line: string) => replaceLines(input, search, line, true, b),
      params: [S, S, S],
      budget: true,
    },
    noescape: { fn: (s: string) => s, params: [S] },
    marshal: { fn: (b: RenderBudget, v: unknown) => marshalJSON(v, '', b), params: [A], budget: true },
    marshalIndent: { fn: (b: RenderBudget, v: unknown) => marshalJSON(v, '  ', b), params: [A], budget: true },
    after: { fn: after, params: [S, S] },
    tolower: { fn: (s: string) => s.toLowerCase(), params: [S] },
    toupper: { fn: (s: string) => s.toUpperCase(), params: [S] },
    string: { fn: (v: unknown) => valueString(v), params: [A] },
    split: { fn: split, params: [S, S] },
    env: {
      fn: (name: string) => {
        const env = ctx().env;
        return Object.hasOwn(env, name) && !isForbiddenName(name) ? (env[name] ?? '') : '';
      },
      params: [S],
    },
    set: {
      fn: (budget: RenderBudget, key: string, value: unknown) => {
        const scratch = ctx().scratch;
        // the map keeps one value per key: a new key costs an item, a replaced string gives back
        if (scratch.has(key)) budget.charge(scratchChars(value) - scratchChars(scratch.get(key)), 0);
        else budget.charge(key.length + scratchChars(value), 1);
        scratch.set(key, value);
        return '';
      },
      params: [S, A],
      budget: true,
    },
    get: { fn: (key: string) => (ctx().scratch.has(key) ? ctx().scratch.get(key) : null), params: [S] },
    niltoblank: { fn: (v: unknown) => (v === null || v === undefined ? '' : valueString(v)), params: [A] },
  };
}

/** A parsed exec template, rendered many times. */
export class ExecTemplate extends DialectTemplate<ExecContext> {
  constructor(
    source: string,
    private readonly opts: ExecRenderOptions = {},
  ) {
    super('exec', EXEC_DELIMS, execFuncs, source, opts);
  }

  /** Renders with `data` as .Data; `env` overrides the env() source of this render. */
  render(data: ValueMap, env?: EnvSource): ExecRenderResult {
    const ctx: ExecContext = {
      command: undefined,
      args: [],
      scratch: new Map(),
      env: env ?? this.opts.env ?? process.env,
      maxArgs: this.opts.maxArgs ?? DEFAULT_MAX_ARGS,
    };
    return this.run(ctx, () => {
      const output = this.template.execute({ Data: data });
      return { command: ctx.command, args: ctx.args, output };
    });
  }
}

const cache = new CompiledCache<ExecTemplate>();

/** Parses (cached by source and options) and renders an exec template. */
export function renderExecTemplate(source: string, data: ValueMap, opts: ExecRenderOptions = {}): ExecRenderResult {
  return cache
    .get(dialectCacheKey(source, opts, opts.maxArgs), () => new ExecTemplate(source, opts))
    .render(data, opts.env);
}
