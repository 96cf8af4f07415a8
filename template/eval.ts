/**
 * Evaluation of pipelines: commands, field chains, variables, function calls and their arguments.
 * The order in which nodes become "current" (state.node) mirrors Go, so errors name the same node.
 */
import { NodeType } from './nodes.js';
import type {
  ArgNode,
  ChainNode,
  CommandNode,
  FieldNode,
  IdentifierNode,
  Node,
  NumberNode,
  PipeNode,
  VariableNode,
} from './nodes.js';
import { MISSING, MissingKey } from './state.js';
import type { State } from './state.js';
import { Param } from './funcs.js';
import type { FuncSpec } from './funcs.js';
import { Kind, kindOf, isTrue, mapGet, typeName, TypedNumber, NumberType } from './values.js';
import { nodeString } from './node-string.js';
import { quote } from './fmt/quote.js';
import { ExecFailure, BudgetExceeded } from './errors.js';
import { IFACE_INDEX } from './builtins.js';
import { assertNever } from '../protocol/never.js';
import { describeError } from '../protocol/errors.js';

/** Runs a pipeline; declared variables are pushed (or assigned) on the state. */
export function evalPipeline(s: State, dot: unknown, pipe: PipeNode | null): unknown {
  if (pipe === null) return undefined;
  s.node = pipe;
  let value: unknown = MISSING;
  const cmds = pipe.cmds;
  for (let i = 0; i < cmds.length; i++) {
    value = evalCommand(s, dot, cmds[i] as CommandNode, value);
    // a value out of a container is an interface; Go unwraps it here and nil becomes "no value"
    if (value === null) value = undefined;
  }
  const decls = pipe.decls;
  for (let i = 0; i < decls.length; i++) {
    const name = (decls[i] as VariableNode).idents[0] as string;
    if (pipe.isAssign) {
      const at = s.varIndex(name);
      s.values[at] = value;
      s.ifaces[at] = false;
    } else s.push(name, value, false);
  }
  return value;
}

function notAFunction(s: State, args: readonly ArgNode[], final: unknown): void {
  if (args.length > 1 || final !== MISSING)
    s.fail(`can't give argument to non-function ${nodeString(args[0] as Node)}`);
}

function evalCommand(s: State, dot: unknown, cmd: CommandNode, final: unknown): unknown {
  const first = cmd.args[0] as ArgNode;
  switch (first.type) {
    case NodeType.Field:
      return evalFieldNode(s, dot, first, cmd.args, final);
    case NodeType.Chain:
      return evalChainNode(s, dot, first, cmd.args, final);
    case NodeType.Identifier:
      return evalFunction(s, dot, first, cmd, cmd.args, final);
    case NodeType.Pipe:
      notAFunction(s, cmd.args, final);
      return evalPipeline(s, dot, first);
    case NodeType.Variable:
      return evalVariableNode(s, first, cmd.args, final);
  }
  s.node = first;
  notAFunction(s, cmd.args, final);
  switch (first.type) {
    case NodeType.Bool:
      return first.value;
    case NodeType.Dot:
      return dot;
    case NodeType.Nil:
      return s.fail('nil is not a command');
    case NodeType.Number:
      return idealConstant(s, first);
    case NodeType.String:
      return first.text;
    default:
      return assertNever(first, 'command');
  }
}

function idealConstant(s: State, n: NumberNode): unknown {
  s.node = n;
  if (n.overflows) s.fail(`${n.text} overflows int`);
  return n.value;
}

function evalFieldNode(
  s: State,
  dot: unknown,
  field: FieldNode,
  args: readonly ArgNode[] | null,
  final: unknown,
): unknown {
  s.node = field;
  return evalFieldChain(s, dot, s.dotIface, field.idents, args, final);
}

function evalChainNode(
  s: State,
  dot: unknown,
  chain: ChainNode,
  args: readonly ArgNode[] | null,
  final: unknown,
): unknown {
  s.node = chain;
  if (chain.node.type === NodeType.Nil) s.fail(`indirection through explicit nil in ${nodeString(chain)}`);
  const receiver = evalArg(s, dot, Param.Value, chain.node);
  return evalFieldChain(
    s,
    receiver,
    chain.node.type === NodeType.Identifier && chain.node.name === 'index',
    chain.fields,
    args,
    final,
  );
}

function evalVariableNode(s: State, v: VariableNode, args: readonly ArgNode[] | null, final: unknown): unknown {
  s.node = v;
  const at = s.varIndex(v.idents[0] as string);
  const value = s.values[at];
  if (v.idents.length === 1) {
    if (args !== null) notAFunction(s, args, final);
    return value;
  }
  return evalFieldChain(s, value, s.ifaces[at] === true, v.idents.slice(1), args, final);
}

// eslint-disable-next-line max-params -- the evaluator keeps the signatures of Go's text/template (exec.go) and runs per node of every render: no options object per call
function evalFieldChain(
  s: State,
  receiver: unknown,
  iface: boolean,
  idents: readonly string[],
  args: readonly ArgNode[] | null,
  final: unknown,
): unknown {
  const n = idents.length;
  let r = receiver;
  let isIface = iface;
  for (let i = 0; i < n - 1; i++) {
    r = evalField(s, idents[i] as string, null, MISSING, r, isIface);
    isIface = true; // map elements are interface{} values
  }
  return evalField(s, idents[n - 1] as string, args, final, r, isIface);
}

// eslint-disable-next-line max-params -- as evalFieldChain
function evalField(
  s: State,
  name: string,
  args: readonly ArgNode[] | null,
  final: unknown,
  receiver: unknown,
  iface: boolean,
): unknown {
  if (receiver === undefined) {
    if (s.env.missingKey === MissingKey.Error) s.fail(`nil data; no entry for key ${quote(name)}`);
    return undefined;
  }
  if (receiver === null) s.fail(`nil pointer evaluating interface {}.${name}`);
  if (typeof receiver === 'object' && kindOf(receiver) === Kind.Map) {
    if ((args !== null && args.length > 1) || final !== MISSING) s.fail(`${name} is not a method but has arguments`);
    const v = mapGet(receiver, name);
    if (v !== undefined) {
      if (typeof v === 'function') s.fail(`field ${name} is a function; functions in data are not callable`);
      return v;
    }
    switch (s.env.missingKey) {
      case MissingKey.Zero:
        return null;
      case MissingKey.Error:
        return s.fail(`map has no entry for key ${quote(name)}`);
      default:
        return undefined;
    }
  }
  return s.fail(`can't evaluate field ${name} in type ${iface ? 'interface {}' : typeName(receiver)}`);
}

// eslint-disable-next-line max-params -- as evalFieldChain
function evalFunction(
  s: State,
  dot: unknown,
  ident: IdentifierNode,
  cmd: Node,
  args: readonly ArgNode[] | null,
  final: unknown,
): unknown {
  s.node = ident;
  const found = s.env.func(ident.name);
  if (found === undefined) return s.fail(`${quote(ident.name)} is not a defined function`);
  return evalCall(s, dot, found.spec, found.builtin, cmd, ident.name, args, final);
}

// eslint-disable-next-line max-params -- as evalFieldChain
function evalCall(
  s: State,
  dot: unknown,
  spec: FuncSpec,
  builtin: boolean,
  node: Node,
  name: string,
  allArgs: readonly ArgNode[] | null,
  final: unknown,
): unknown {
  const args = allArgs === null ? [] : allArgs.slice(1);
  const numIn = args.length + (final === MISSING ? 0 : 1);
  const fixed = spec.params.length;
  if (spec.variadic !== undefined) {
    if (numIn < fixed) s.fail(`wrong number of args for ${name}: want at least ${fixed} got ${numIn}`);
  } else if (numIn !== fixed) s.fail(`wrong number of args for ${name}: want ${fixed} got ${numIn}`);

  if (builtin && (name === 'and' || name === 'or')) {
    const wantTrue = name === 'or';
    let v: unknown;
    for (const arg of args) {
      v = evalArg(s, dot, Param.Value, arg);
      if (isTrue(v) === wantTrue) return v;
    }
    return final === MISSING ? v : final;
  }

  const argv: unknown[] = new Array(numIn);
  let i = 0;
  for (; i < fixed && i < args.length; i++) argv[i] = evalArg(s, dot, spec.params[i] as Param, args[i] as ArgNode);
  const rest = spec.variadic ?? Param.Any;
  const sliceIndexes = builtin && name === 'slice';
  for (; i < args.length; i++) {
    argv[i] = evalArg(s, dot, rest, args[i] as ArgNode);
    if (sliceIndexes && s.argIface) argv[i] = IFACE_INDEX;
  }
  if (final !== MISSING) {
    const t = numIn - 1 < fixed ? (spec.params[numIn - 1] as Param) : rest;
    argv[numIn - 1] = validateType(s, final, t);
  }
  let result: unknown;
  try {
    result = spec.budget === true ? spec.fn(s.budget, ...argv) : spec.fn(...argv);
  } catch (e) {
    if (e instanceof ExecFailure) {
      // a spent budget is reported at the call that spent it
      if (e instanceof BudgetExceeded) s.node = node;
      throw e;
    }
    s.node = node;
    return s.fail(`error calling ${name}: ${describeError(e)}`);
  }
  // no value may outgrow the render's budget: functions that build strings check the room left
  // themselves, this catches any other (a user's function, a case-changing one)
  if (typeof result === 'string' && result.length > s.budget.maxChars) {
    s.node = node;
    s.budget.tooManyChars();
  }
  return result;
}

/** Converts an evaluated value to a parameter type, failing like Go's validateType. */
function validateType(s: State, value: unknown, param: Param): unknown {
  switch (param) {
    case Param.Value:
      return value;
    case Param.Any:
      return value === undefined ? null : value;
    case Param.String:
    case Param.Int:
    case Param.Bool: {
      if (value === undefined) return s.fail(`invalid value; expected ${param}`);
      const k = kindOf(value);
      const ok = param === Param.String ? k === Kind.String : param === Param.Bool ? k === Kind.Bool : k === Kind.Int;
      if (!ok)
        s.fail(`wrong type for value; expected ${param}; got ${value === null ? 'interface {}' : typeName(value)}`);
      return value;
    }
    default:
      return assertNever(param, 'parameter kind');
  }
}

/**
 * Evaluates one argument. s.argIface tells whether the value is still an interface (an element of a
 * map or list not yet passed through a pipeline); only slice's index check needs to know.
 */
function evalArg(s: State, dot: unknown, param: Param, n: ArgNode): unknown {
  s.node = n;
  s.argIface = false;
  switch (n.type) {
    case NodeType.Dot:
      s.argIface = s.dotIface && dot !== undefined;
      return validateType(s, dot, param);
    case NodeType.Nil:
      if (param === Param.Any) return null;
      if (param === Param.Value) return undefined;
      return s.fail(`cannot assign nil to ${param}`);
    case NodeType.Field: {
      const v = evalFieldNode(s, dot, n, [n], MISSING);
      s.argIface = v !== undefined;
      return validateType(s, v, param);
    }
    case NodeType.Variable: {
      const v = evalVariableNode(s, n, null, MISSING);
      s.argIface = n.idents.length === 1 ? s.ifaces[s.varIndex(n.idents[0] as string)] === true : v !== undefined;
      return validateType(s, v, param);
    }
    case NodeType.Pipe: {
      const v = evalPipeline(s, dot, n);
      s.argIface = false;
      return validateType(s, v, param);
    }
    case NodeType.Identifier: {
      const v = evalFunction(s, dot, n, n, null, MISSING);
      s.argIface = false;
      return validateType(s, v, param);
    }
    case NodeType.Chain: {
      const v = evalChainNode(s, dot, n, null, MISSING);
      s.argIface = v !== undefined;
      return validateType(s, v, param);
    }
  }
  switch (param) {
    case Param.Any:
    case Param.Value:
      switch (n.type) {
        case NodeType.Bool:
          return n.value;
        case NodeType.Number:
          return idealConstant(s, n);
        case NodeType.String:
          return n.text;
        default:
          return assertNever(n, 'template node');
      }
    case Param.String:
      if (n.type === NodeType.String) return n.text;
      return s.fail(`expected string; found ${nodeString(n)}`);
    case Param.Bool:
      if (n.type === NodeType.Bool) return n.value;
      return s.fail(`expected bool; found ${nodeString(n)}`);
    case Param.Int:
      if (n.type === NodeType.Number && !n.overflows) {
        const v = n.value;
        if ((typeof v === 'number' && Number.isInteger(v)) || typeof v === 'bigint') return v;
        // Go accepts a float constant with a whole value (1.0) for an int parameter
        if (v instanceof TypedNumber && v.type === NumberType.Float64 && Number.isInteger(v.value)) return v.value;
      }
      return s.fail(`expected integer; found ${nodeString(n)}`);
    default:
      return assertNever(param, 'parameter kind');
  }
}
