/**
 * The parse tree. Every node records its source offset so execution errors can name the line and
 * column; constants carry their evaluated value so the executor does no parsing.
 */

export const NodeType = {
  List: 'list',
  Text: 'text',
  Action: 'action',
  If: 'if',
  Range: 'range',
  With: 'with',
  Template: 'template',
  Break: 'break',
  Continue: 'continue',
  Pipe: 'pipe',
  Command: 'command',
  Field: 'field',
  Variable: 'variable',
  Chain: 'chain',
  Identifier: 'identifier',
  Dot: 'dot',
  Nil: 'nil',
  Bool: 'bool',
  Number: 'number',
  String: 'string',
  /** {{end}}: only seen by the parser. */
  End: 'end',
  /** {{else}}: only seen by the parser. */
  Else: 'else',
} as const;
export type NodeType = (typeof NodeType)[keyof typeof NodeType];

interface Base {
  /** Offset of the node in its source text. */
  pos: number;
}

export interface ListNode extends Base {
  type: typeof NodeType.List;
  nodes: Node[];
}
interface TextNode extends Base {
  type: typeof NodeType.Text;
  text: string;
}
export interface ActionNode extends Base {
  type: typeof NodeType.Action;
  line: number;
  pipe: PipeNode;
}
/** if, range and with share this shape. */
export interface BranchNode<T extends string> extends Base {
  type: T;
  line: number;
  pipe: PipeNode;
  list: ListNode;
  elseList: ListNode | null;
}
type IfNode = BranchNode<typeof NodeType.If>;
export type RangeNode = BranchNode<typeof NodeType.Range>;
type WithNode = BranchNode<typeof NodeType.With>;
export interface TemplateNode extends Base {
  type: typeof NodeType.Template;
  line: number;
  name: string;
  pipe: PipeNode | null;
}
interface BreakNode extends Base {
  type: typeof NodeType.Break;
}
interface ContinueNode extends Base {
  type: typeof NodeType.Continue;
}
export interface EndNode extends Base {
  type: typeof NodeType.End;
}
export interface ElseNode extends Base {
  type: typeof NodeType.Else;
}
export interface PipeNode extends Base {
  type: typeof NodeType.Pipe;
  line: number;
  /** `$x = ...` rather than `$x := ...`. */
  isAssign: boolean;
  decls: VariableNode[];
  cmds: CommandNode[];
}
export interface CommandNode extends Base {
  type: typeof NodeType.Command;
  args: ArgNode[];
}
export interface FieldNode extends Base {
  type: typeof NodeType.Field;
  /** Field names without the dots. */
  idents: string[];
}
export interface VariableNode extends Base {
  type: typeof NodeType.Variable;
  /** The variable name ("$x") then field names. */
  idents: string[];
}
export interface ChainNode extends Base {
  type: typeof NodeType.Chain;
  node: ArgNode;
  fields: string[];
}
export interface IdentifierNode extends Base {
  type: typeof NodeType.Identifier;
  name: string;
}
interface DotNode extends Base {
  type: typeof NodeType.Dot;
}
interface NilNode extends Base {
  type: typeof NodeType.Nil;
}
interface BoolNode extends Base {
  type: typeof NodeType.Bool;
  value: boolean;
}
export interface NumberNode extends Base {
  type: typeof NodeType.Number;
  /** Source text, as printed in errors. */
  text: string;
  /** The Go value of the constant: int (number or bigint) or float64. */
  value: unknown;
  /** An unsigned constant beyond int64: evaluating it fails with "overflows int". */
  overflows: boolean;
}
interface StringNode extends Base {
  type: typeof NodeType.String;
  /** Source text with quotes. */
  quoted: string;
  text: string;
}

/** Nodes that can be a command word or argument. */
export type ArgNode =
  | FieldNode
  | VariableNode
  | ChainNode
  | IdentifierNode
  | DotNode
  | NilNode
  | BoolNode
  | NumberNode
  | StringNode
  | PipeNode;
/** Nodes that can appear in a list. */
export type ListItem = TextNode | ActionNode | IfNode | RangeNode | WithNode | TemplateNode | BreakNode | ContinueNode;
export type Node = ListNode | ListItem | EndNode | ElseNode | CommandNode | ArgNode;

/** A parsed template body with the source it came from (for error positions). */
export interface Tree {
  name: string;
  /** Name given to the parse that produced this tree (Go's ParseName). */
  parseName: string;
  /** Full source text of that parse. */
  text: string;
  root: ListNode;
}

/** Go's parse.IsEmptyTree: only whitespace text (and nothing else) counts as empty. */
export function isEmptyTree(n: Node): boolean {
  switch (n.type) {
    case NodeType.List:
      return n.nodes.every(isEmptyTree);
    case NodeType.Text:
      return n.text.trim().length === 0;
    default:
      return false;
  }
}
