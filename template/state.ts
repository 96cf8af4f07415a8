/**
 * The state of one execution: output, variable stack, the node being evaluated (Go reports errors
 * against the last node it started to evaluate) and the limits that keep a render bounded.
 */
import type { Node, Tree } from './nodes.js';
import type { FuncSpec } from './funcs.js';
import { nodeString } from './node-string.js';
import { ExecFailure } from './errors.js';
import { RenderBudget } from './budget.js';
import type { LimitNames } from './budget.js';
import { byteLength } from './utf8.js';
import { quote } from './fmt/quote.js';

/** What to do when a map has no entry for a key (Go's missingkey option). */
export const MissingKey = {
  /** Print "<no value>" (Go's default). */
  Default: 'default',
  /** Same as default. */
  Invalid: 'invalid',
  /** Use the zero value of the map's element type (nil for interface{} maps). */
  Zero: 'zero',
  /** Fail the execution. */
  Error: 'error',
} as const;
export type MissingKey = (typeof MissingKey)[keyof typeof MissingKey];

/** Everything execution needs from the template set. */
export interface ExecEnv {
  lookup(name: string): Tree | undefined;
  func(name: string): { spec: FuncSpec; builtin: boolean } | undefined;
  missingKey: MissingKey;
  /** Characters (UTF-16 units) one execution may build: its output plus what functions charge. */
  maxChars: number;
  /** Items (arguments, values, entries) functions may charge in one execution. */
  maxItems: number;
  /** How budget errors name the two limits. */
  limitNames: LimitNames;
  /** Limit of nested {{template}} calls. */
  maxDepth: number;
  /** Limit of range iterations plus template calls in one execution (a loop over a huge integer would never end). */
  maxIterations: number;
}

/** Marks an absent piped value (Go's missingVal). */
export const MISSING: unique symbol = Symbol('missing');

export class State {
  out = '';
  /** Variable names, values, and whether each value is interface-typed, as parallel stacks. */
  names: string[];
  values: unknown[];
  ifaces: boolean[];
  /** The node being evaluated, for error locations. */
  node: Node | null = null;
  depth = 0;
  /** Whether dot came out of a container (Go types it interface {} in messages). */
  dotIface = false;
  /** Whether the last evaluated argument is still an interface value (see evalArg). */
  argIface = false;
  /** Range iterations left in this execution. */
  iterationsLeft: number;
  /** What this execution may still build. */
  readonly budget: RenderBudget;

  constructor(
    readonly env: ExecEnv,
    public tree: Tree,
    dot: unknown,
  ) {
    this.names = ['$'];
    this.values = [dot];
    this.ifaces = [false];
    this.iterationsLeft = env.maxIterations;
    this.budget = new RenderBudget(env.maxChars, env.maxItems, env.limitNames);
  }

  /** Appends output, charged to the budget; over it, the output keeps what fitted. */
  write(s: string): void {
    this.out += s;
    const b = this.budget;
    b.chars += s.length;
    if (b.chars > b.maxChars) {
      this.out = this.out.slice(0, Math.max(0, this.out.length - (b.chars - b.maxChars)));
      // the output as a whole is over, not one node: the message has no location
      this.node = null;
      b.tooManyChars();
    }
  }

  /** Counts one range iteration or template call against the execution's budget. */
  iterate(): void {
    if (--this.iterationsLeft < 0)
      this.fail(`more than ${this.env.maxIterations} range iterations and template calls in one execution`);
  }

  push(name: string, value: unknown, iface: boolean): void {
    this.names.push(name);
    this.values.push(value);
    this.ifaces.push(iface);
  }

  mark(): number {
    return this.names.length;
  }

  pop(mark: number): void {
    this.names.length = mark;
    this.values.length = mark;
    this.ifaces.length = mark;
  }

  setTopVar(n: number, value: unknown, iface: boolean): void {
    const i = this.names.length - n;
    this.values[i] = value;
    this.ifaces[i] = iface;
  }

  /** Index of the innermost variable called `name`. */
  varIndex(name: string): number {
    for (let i = this.names.length - 1; i >= 0; i--) if (this.names[i] === name) return i;
    return this.fail(`undefined variable: ${name}`);
  }

  /** Fails at the current node: "template: NAME:LINE:COL: executing "T" at <node>: msg". */
  fail(message: string): never {
    throw new ExecFailure(this.errorPrefix() + message, true);
  }

  errorPrefix(): string {
    const tree = this.tree;
    if (this.node === null) return `template: ${tree.name}: `;
    const pos = this.node.pos;
    const text = tree.text;
    const nl = text.lastIndexOf('\n', pos - 1);
    let line = 1;
    for (let i = text.indexOf('\n'); i >= 0 && i < pos; i = text.indexOf('\n', i + 1)) line++;
    const col = nl < 0 ? byteLength(text.slice(0, pos)) : byteLength(text.slice(nl + 1, pos));
    const context = nodeString(this.node);
    return `template: ${tree.parseName}:${line}:${col}: executing ${quote(tree.name)} at <${context}>: `;
  }
}
