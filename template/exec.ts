/**
 * Walking the tree: text, printed actions, if/with/range (with break and continue), and template
 * invocation. Loop control travels as a return signal rather than an exception, which keeps the
 * hot path free of try/catch.
 */
import { NodeType } from './nodes.js';
import type { ActionNode, ListNode, Node, RangeNode, TemplateNode, Tree, BranchNode, PipeNode } from './nodes.js';
import { State } from './state.js';
import type { ExecEnv } from './state.js';
import { evalPipeline } from './eval.js';
import { Kind, kindOf, isTrue, mapGet, mapKeys, sliceItems, TypedNumber } from './values.js';
import { formatValue } from './fmt/value.js';
import { newFlags } from './fmt/flags.js';
import { nodeString } from './node-string.js';
import { quote } from './fmt/quote.js';
import { assertNever } from '../protocol/never.js';

/** How a walk ended. */
const Signal = { Normal: 0, Break: 1, Continue: 2 } as const;
type Signal = (typeof Signal)[keyof typeof Signal];

const flags = newFlags();

/** Go's %v of a value (fmt.Sprint with one operand). */
export function valueString(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return v;
    case 'boolean':
      return v ? 'true' : 'false';
    case 'number':
      if (Number.isSafeInteger(v)) return String(v);
      break;
    case 'bigint':
      return v.toString();
  }
  return formatValue(flags, v, 'v');
}

function printValue(s: State, node: ActionNode, v: unknown): void {
  s.node = node;
  if (v === undefined) {
    s.write('<no value>');
    return;
  }
  if (typeof v === 'string') {
    s.write(v);
    return;
  }
  if (kindOf(v) === Kind.Func) s.fail(`can't print ${nodeString(node)} of type func`);
  s.write(valueString(v));
}

function walk(s: State, dot: unknown, node: Node): Signal {
  s.node = node;
  switch (node.type) {
    case NodeType.Text:
      s.write(node.text);
      return Signal.Normal;
    case NodeType.Action: {
      const v = evalPipeline(s, dot, node.pipe);
      if (node.pipe.decls.length === 0) printValue(s, node, v);
      return Signal.Normal;
    }
    case NodeType.List:
      return walkList(s, dot, node);
    case NodeType.If:
    case NodeType.With:
      return walkIfOrWith(s, dot, node);
    case NodeType.Range:
      return walkRange(s, dot, node);
    case NodeType.Template:
      walkTemplate(s, dot, node);
      return Signal.Normal;
    case NodeType.Break:
      return Signal.Break;
    case NodeType.Continue:
      return Signal.Continue;
    case NodeType.End:
    case NodeType.Else:
    case NodeType.Pipe:
    case NodeType.Command:
    case NodeType.Field:
    case NodeType.Variable:
    case NodeType.Chain:
    case NodeType.Identifier:
    case NodeType.Dot:
    case NodeType.Nil:
    case NodeType.Bool:
    case NodeType.Number:
    case NodeType.String:
      return s.fail(`unknown node: ${nodeString(node)}`);
    default:
      return assertNever(node, 'template node');
  }
}

function walkList(s: State, dot: unknown, list: ListNode): Signal {
  const nodes = list.nodes;
  for (let i = 0; i < nodes.length; i++) {
    const r = walk(s, dot, nodes[i] as Node);
    if (r !== Signal.Normal) return r;
  }
  return Signal.Normal;
}

function walkIfOrWith(s: State, dot: unknown, node: BranchNode<typeof NodeType.If | typeof NodeType.With>): Signal {
  // no try/finally: a failure abandons the whole execution, so nothing needs restoring
  const mark = s.mark();
  const val = evalPipeline(s, dot, node.pipe);
  let sig: Signal = Signal.Normal;
  if (isTrue(val)) {
    if (node.type === NodeType.With) {
      const saved = s.dotIface;
      s.dotIface = false;
      sig = walkList(s, val, node.list);
      s.dotIface = saved;
    } else sig = walkList(s, dot, node.list);
  } else if (node.elseList !== null) sig = walkList(s, dot, node.elseList);
  s.pop(mark);
  return sig;
}

function walkRange(s: State, dot: unknown, r: RangeNode): Signal {
  s.node = r;
  const outer = s.mark();
  const savedIface = s.dotIface;
  const val = evalPipeline(s, dot, r.pipe);
  const mark = s.mark();
  const decls = r.pipe.decls.length;
  /** One pass of the body; false when {{break}} ends the loop. */
  const iteration = (key: unknown, elem: unknown, elemIface: boolean): boolean => {
    s.iterate();
    if (decls > 0) s.setTopVar(1, elem, elemIface);
    if (decls > 1) s.setTopVar(2, key, false);
    s.dotIface = elemIface;
    const sig = walkList(s, elem, r.list);
    s.pop(mark);
    return sig !== Signal.Break;
  };
  let ran = true;
  switch (kindOf(val)) {
    case Kind.Slice: {
      const items = sliceItems(val);
      if (items.length === 0) ran = false;
      for (let i = 0; i < items.length; i++) if (!iteration(i, items[i], true)) break;
      break;
    }
    case Kind.Map: {
      const keys = mapKeys(val as object);
      if (keys.length === 0) ran = false;
      for (const k of keys) if (!iteration(k, mapGet(val as object, k), true)) break;
      break;
    }
    case Kind.Int:
    case Kind.Uint: {
      // range over an integer (Go 1.22): 0 .. n-1
      if (decls > 1) s.fail(`can't use ${valueString(val)} to iterate over more than one variable`);
      const n = val instanceof TypedNumber ? val.value : Number(val as number | bigint);
      if (n <= 0) ran = false;
      for (let i = 0; i < n; i++) if (!iteration(i, i, false)) break;
      break;
    }
    case Kind.Invalid:
    case Kind.Nil:
      ran = false;
      break;
    default:
      s.fail(`range can't iterate over ${valueString(val)}`);
  }
  s.dotIface = savedIface;
  let sig: Signal = Signal.Normal;
  if (!ran && r.elseList !== null) sig = walkList(s, dot, r.elseList);
  s.pop(outer);
  // as in Go, a {{break}} in the else part (of an outer loop) ends this range statement only,
  // while a {{continue}} goes on to the outer loop's next iteration
  return sig === Signal.Break ? Signal.Normal : sig;
}

function walkTemplate(s: State, dot: unknown, t: TemplateNode): void {
  s.node = t;
  const tree = s.env.lookup(t.name);
  if (tree === undefined) s.fail(`template ${quote(t.name)} not defined`);
  if (s.depth >= s.env.maxDepth) s.fail(`exceeded maximum template depth (${s.env.maxDepth})`);
  // template calls share the iteration budget: branching recursion could otherwise run for ages
  s.iterate();
  const newDot = evalPipeline(s, dot, t.pipe as PipeNode | null);
  const saved = { tree: s.tree, names: s.names, values: s.values, ifaces: s.ifaces, dotIface: s.dotIface };
  s.depth++;
  s.tree = tree;
  s.names = ['$'];
  s.values = [newDot];
  s.ifaces = [false];
  s.dotIface = false;
  walkList(s, newDot, tree.root);
  s.depth--;
  s.tree = saved.tree;
  s.names = saved.names;
  s.values = saved.values;
  s.ifaces = saved.ifaces;
  s.dotIface = saved.dotIface;
}

/** Executes `tree` with `data` as dot; returns the output or throws ExecFailure (state.out holds the partial output). */
export function executeTree(
  env: ExecEnv,
  tree: Tree,
  data: unknown,
  state: State = new State(env, tree, data),
): string {
  walkList(state, data, tree.root);
  return state.out;
}
