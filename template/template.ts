/**
 * The public Template: a named member of a set of templates sharing functions and options, like Go's
 * *template.Template. Parsing adds or replaces definitions; execution is synchronous and returns the
 * output, throwing TemplateError (with the partial output) on failure.
 */
import { parse } from './parser.js';
import type { Tree } from './nodes.js';
import { isEmptyTree } from './nodes.js';
import { executeTree } from './exec.js';
import { State } from './state.js';
import type { ExecEnv } from './state.js';
import { MissingKey } from './state.js';
import { BUILTINS } from './builtins.js';
import { toSpec } from './funcs.js';
import type { FuncMap, FuncSpec } from './funcs.js';
import {
  TemplateError,
  TemplatePhase,
  ExecFailure,
  ParseFailure,
  BudgetExceeded,
  RenderBudgetError,
} from './errors.js';
import { DEFAULT_LIMIT_NAMES, budgetOptions } from './budget.js';
import type { BudgetOptions } from './budget.js';
import { quote } from './fmt/quote.js';
import { describeError } from '../protocol/errors.js';

/** Default character budget of one execution (output plus what functions keep): 16 MiB. */
export const DEFAULT_MAX_CHARS = 16 * 1024 * 1024;
/** @deprecated The character budget also bounds the output: use DEFAULT_MAX_CHARS. */
export const DEFAULT_MAX_OUTPUT = DEFAULT_MAX_CHARS;
/** Default item budget of one execution (arguments, values, keys and entries functions add). */
export const DEFAULT_MAX_ITEMS = 1_000_000;
/**
 * Default limit of nested {{template}} calls. Go allows 100000; a JS stack holds far fewer frames,
 * so the default is lower and stays clear of a stack overflow.
 */
export const DEFAULT_MAX_DEPTH = 1000;
/** Default limit of range iterations plus template calls in one execution. */
export const DEFAULT_MAX_ITERATIONS = 10_000_000;

/**
 * Options of a template set. The budget options (maxChars, maxItems, limitNames) bound what one
 * execution builds: its output plus what budgeted functions keep or build at once.
 */
export interface TemplateOptions extends BudgetOptions {
  /** Action delimiters; default ["{{", "}}"]. */
  delims?: [string, string];
  /** Functions added to the builtins (same names replace builtins, as in Go). */
  funcs?: FuncMap;
  /** Behaviour for missing map keys (Go's missingkey option); default 'default'. */
  missingkey?: MissingKey;
  /** Maximum nesting of {{template}} calls; default 1000. */
  maxDepth?: number;
  /** Maximum range iterations plus template calls in one execution; default 10 million. */
  maxIterations?: number;
}

const IDENT = /^[\p{L}_][\p{L}\p{Nd}_]*$/u;

/** State shared by all templates of one set. */
class Common {
  readonly trees = new Map<string, Tree>();
  readonly funcs = new Map<string, FuncSpec>();
  left = '{{';
  right = '}}';
  missingKey: MissingKey = MissingKey.Default;
  maxChars = DEFAULT_MAX_CHARS;
  maxItems = DEFAULT_MAX_ITEMS;
  limitNames = DEFAULT_LIMIT_NAMES;
  maxDepth = DEFAULT_MAX_DEPTH;
  maxIterations = DEFAULT_MAX_ITERATIONS;
  private env: ExecEnv | undefined;

  /** The execution environment, rebuilt only after the set changes. */
  execEnv(): ExecEnv {
    if (this.env !== undefined) return this.env;
    const trees = this.trees;
    const funcs = this.funcs;
    const builtinEntries = new Map([...BUILTINS].map(([k, spec]) => [k, { spec, builtin: true }]));
    const userEntries = new Map([...funcs].map(([k, spec]) => [k, { spec, builtin: false }]));
    this.env = {
      lookup: (name) => trees.get(name),
      func: (name) => userEntries.get(name) ?? builtinEntries.get(name),
      missingKey: this.missingKey,
      maxChars: this.maxChars,
      maxItems: this.maxItems,
      limitNames: this.limitNames,
      maxDepth: this.maxDepth,
      maxIterations: this.maxIterations,
    };
    return this.env;
  }

  changed(): void {
    this.env = undefined;
  }

  hasFunction(name: string): boolean {
    return this.funcs.has(name) || BUILTINS.has(name);
  }
}

export class Template {
  private common = new Common();

  constructor(
    readonly name: string,
    opts: TemplateOptions = {},
  ) {
    if (opts.delims !== undefined) this.delims(opts.delims[0], opts.delims[1]);
    if (opts.funcs !== undefined) this.funcs(opts.funcs);
    if (opts.missingkey !== undefined) this.common.missingKey = checkMissingKey(opts.missingkey);
    const budget = budgetOptions(opts);
    if (budget.maxChars !== undefined) this.common.maxChars = budget.maxChars;
    if (budget.maxItems !== undefined) this.common.maxItems = budget.maxItems;
    if (budget.limitNames !== undefined) this.common.limitNames = budget.limitNames;
    if (opts.maxDepth !== undefined) this.common.maxDepth = opts.maxDepth;
    if (opts.maxIterations !== undefined) this.common.maxIterations = opts.maxIterations;
  }

  /** Sets the delimiters used by later parse calls; empty strings mean the defaults. */
  delims(left: string, right: string): this {
    this.common.left = left === '' ? '{{' : left;
    this.common.right = right === '' ? '}}' : right;
    return this;
  }

  /** Adds functions (before parsing the templates that use them). */
  funcs(map: FuncMap): this {
    for (const [name, f] of Object.entries(map)) {
      if (!IDENT.test(name))
        throw new TemplateError(
          `template: function name ${quote(name)} is not a valid identifier`,
          TemplatePhase.Parse,
        );
      if (typeof f !== 'function' && (typeof f !== 'object' || f === null || typeof f.fn !== 'function')) {
        throw new TemplateError(`template: value for ${name} not a function`, TemplatePhase.Parse);
      }
      this.common.funcs.set(name, toSpec(f));
    }
    this.common.changed();
    return this;
  }

  /** Parses `text` as this template's body; {{define}}s add or replace named templates. */
  parse(text: string): this {
    let trees: Map<string, Tree>;
    try {
      trees = parse(this.name, text, this.common.left, this.common.right, (n) => this.common.hasFunction(n));
    } catch (e) {
      if (e instanceof ParseFailure) throw new TemplateError(e.message, TemplatePhase.Parse);
      if (e instanceof RangeError)
        throw new TemplateError(
          `template: ${this.name}: template is nested too deeply to parse`,
          TemplatePhase.Parse,
          '',
          e,
        );
      throw e;
    }
    for (const [name, tree] of trees) {
      const old = this.common.trees.get(name);
      // an empty body never replaces an existing definition (Go's AddParseTree)
      if (old !== undefined && isEmptyTree(tree.root)) continue;
      this.common.trees.set(name, tree);
    }
    this.common.changed();
    return this;
  }

  /** Executes this template with `data` as dot. */
  execute(data?: unknown): string {
    return this.run(this.name, data);
  }

  /** Executes the template called `name` of this set. */
  executeTemplate(name: string, data?: unknown): string {
    if (!this.common.trees.has(name)) {
      throw new TemplateError(
        `template: no template ${quote(name)} associated with template ${quote(this.name)}`,
        TemplatePhase.Exec,
      );
    }
    return this.run(name, data);
  }

  private run(name: string, data: unknown): string {
    const tree = this.common.trees.get(name);
    if (tree === undefined)
      throw new TemplateError(
        `template: ${name}: ${quote(name)} is an incomplete or empty template`,
        TemplatePhase.Exec,
      );
    const env = this.common.execEnv();
    // Go's reflect.ValueOf(nil) is the invalid value
    const dot = data === null ? undefined : data;
    const state = new State(env, tree, dot);
    try {
      return executeTree(env, tree, dot, state);
    } catch (e) {
      if (e instanceof BudgetExceeded)
        throw new RenderBudgetError(state.errorPrefix() + e.message, state.out, e.limit, e.max);
      if (e instanceof ExecFailure) throw new TemplateError(e.message, TemplatePhase.Exec, state.out);
      if (e instanceof RangeError) {
        throw new TemplateError(
          `template: ${name}: execution nested too deeply (JS stack exhausted)`,
          TemplatePhase.Exec,
          state.out,
          e,
        );
      }
      throw new TemplateError(
        `template: ${name}: internal error: ${describeError(e)}`,
        TemplatePhase.Exec,
        state.out,
        e,
      );
    }
  }

  /** The template called `name` in this set, or undefined. */
  lookup(name: string): Template | undefined {
    if (!this.common.trees.has(name)) return undefined;
    // another view of the same set, as Go's Lookup returns
    const view = new Template(name);
    view.common = this.common;
    return view;
  }

  /** Names of all templates of the set, sorted. */
  templateNames(): string[] {
    return [...this.common.trees.keys()].sort();
  }

  /** Go's DefinedTemplates: "; defined templates are: "a", "b"" or ''. */
  definedTemplates(): string {
    const names = this.templateNames();
    if (names.length === 0) return '';
    return '; defined templates are: ' + names.map((n) => quote(n)).join(', ');
  }
}

function checkMissingKey(v: string): MissingKey {
  switch (v) {
    case MissingKey.Default:
    case MissingKey.Invalid:
    case MissingKey.Zero:
    case MissingKey.Error:
      return v;
    default:
      throw new TemplateError(`template: unrecognized option: missingkey=${v}`, TemplatePhase.Parse);
  }
}
