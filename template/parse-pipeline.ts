/**
 * Token access and the expression half of the parser: pipelines, commands, operands and terms.
 * Error messages and which token they blame follow Go's parser, because users compare them with
 * what the Go services printed.
 */
import { Tok, tokenString } from './tokens.js';
import type { Token } from './tokens.js';
import { NodeType } from './nodes.js';
import type { ArgNode, CommandNode, PipeNode, VariableNode } from './nodes.js';
import { ParseFailure } from './errors.js';
import { parseNumber, NumberSyntaxError } from './number.js';
import { unquoteString, SyntaxFailure } from './unquote.js';
import { quote } from './fmt/quote.js';

export class PipelineParser {
  protected index = 0;
  /** Furthest token fetched: Go reports parse errors on that token's line. */
  private furthest = 0;
  /** Variables in scope; "$" is always first. */
  protected vars: string[] = ['$'];
  /** Line of the action being parsed (0 outside actions), for lexer errors spanning lines. */
  protected actionLine = 0;
  /** Depth of enclosing {{range}}s, for break and continue. */
  protected rangeDepth = 0;

  constructor(
    protected readonly tokens: Token[],
    protected readonly parseName: string,
    private readonly hasFunction: (name: string) => boolean,
  ) {}

  protected next(): Token {
    const i = Math.min(this.index, this.tokens.length - 1);
    this.index = i + 1;
    if (i > this.furthest) this.furthest = i;
    return this.tokens[i] as Token;
  }

  protected backup(n = 1): void {
    this.index -= n;
  }

  protected peek(): Token {
    const t = this.next();
    this.backup();
    return t;
  }

  protected nextNonSpace(): Token {
    let t = this.next();
    while (t.type === Tok.Space) t = this.next();
    return t;
  }

  protected peekNonSpace(): Token {
    const t = this.nextNonSpace();
    this.backup();
    return t;
  }

  protected errorf(message: string): never {
    throw new ParseFailure(
      `template: ${this.parseName}:${this.tokens[this.furthest]?.line ?? 1}: ${message}`,
      this.tokens[this.furthest]?.line ?? 1,
    );
  }

  /** "unexpected X in CONTEXT", or the lexer's message for error tokens. */
  protected unexpected(t: Token, context: string): never {
    if (t.type === Tok.Error) {
      let extra = '';
      if (this.actionLine !== 0 && this.actionLine !== t.line) {
        extra = ` in action started at ${this.parseName}:${this.actionLine}`;
        if (t.val.endsWith(' action')) extra = extra.slice(' in action'.length);
      }
      this.errorf(tokenString(t) + extra);
    }
    this.errorf(`unexpected ${tokenString(t)} in ${context}`);
  }

  protected expect(type: Tok, context: string): Token {
    const t = this.nextNonSpace();
    if (t.type !== type) this.unexpected(t, context);
    return t;
  }

  protected popVars(n: number): void {
    this.vars.length = n;
  }

  /** A pipeline, with optional declarations, up to the `end` token. */
  protected pipeline(context: string, end: Tok): PipeNode {
    const first = this.peekNonSpace();
    const pipe: PipeNode = {
      type: NodeType.Pipe,
      pos: first.pos,
      line: first.line,
      isAssign: false,
      decls: [],
      cmds: [],
    };
    for (;;) {
      const v = this.peekNonSpace();
      if (v.type !== Tok.Variable) break;
      this.next();
      const after = this.peek();
      const next = this.peekNonSpace();
      if (next.type === Tok.Assign || next.type === Tok.Declare) {
        pipe.isAssign = next.type === Tok.Assign;
        this.nextNonSpace();
        pipe.decls.push(this.newVariable(v.pos, v.val));
        this.vars.push(v.val);
        break;
      }
      if (next.type === Tok.Char && next.val === ',') {
        this.nextNonSpace();
        pipe.decls.push(this.newVariable(v.pos, v.val));
        this.vars.push(v.val);
        if (context === 'range' && pipe.decls.length < 2) {
          const t = this.peekNonSpace().type;
          if (t === Tok.Variable || t === Tok.RightDelim || t === Tok.RightParen) continue;
          this.errorf('range can only initialize variables');
        }
        this.errorf(`too many declarations in ${context}`);
      }
      // not a declaration: the variable is the first operand
      if (after.type === Tok.Space) this.backup(2);
      else this.backup(1);
      break;
    }
    for (;;) {
      const t = this.nextNonSpace();
      if (t.type === end) {
        this.checkPipeline(pipe, context);
        return pipe;
      }
      switch (t.type) {
        case Tok.Bool:
        case Tok.CharConstant:
        case Tok.Complex:
        case Tok.Dot:
        case Tok.Field:
        case Tok.Identifier:
        case Tok.Number:
        case Tok.Nil:
        case Tok.RawString:
        case Tok.String:
        case Tok.Variable:
        case Tok.LeftParen:
          this.backup();
          pipe.cmds.push(this.command());
          break;
        default:
          this.unexpected(t, context);
      }
    }
  }

  private checkPipeline(pipe: PipeNode, context: string): void {
    if (pipe.cmds.length === 0) this.errorf(`missing value for ${context}`);
    for (let i = 1; i < pipe.cmds.length; i++) {
      switch (pipe.cmds[i]?.args[0]?.type) {
        case NodeType.Bool:
        case NodeType.Dot:
        case NodeType.Nil:
        case NodeType.Number:
        case NodeType.String:
          this.errorf(`non executable command in pipeline stage ${i + 1}`);
      }
    }
  }

  private command(): CommandNode {
    const cmd: CommandNode = { type: NodeType.Command, pos: this.peekNonSpace().pos, args: [] };
    for (;;) {
      this.peekNonSpace();
      const operand = this.operand();
      if (operand !== null) cmd.args.push(operand);
      const t = this.next();
      if (t.type === Tok.Space) continue;
      if (t.type === Tok.RightDelim || t.type === Tok.RightParen) this.backup();
      else if (t.type !== Tok.Pipe) this.unexpected(t, 'operand');
      break;
    }
    if (cmd.args.length === 0) this.errorf('empty command');
    return cmd;
  }

  /** A term followed by optional .Field chains. */
  private operand(): ArgNode | null {
    const node = this.term();
    if (node === null) return null;
    if (this.peek().type !== Tok.Field) return node;
    const pos = this.peek().pos;
    const fields: string[] = [];
    while (this.peek().type === Tok.Field) fields.push(this.next().val.slice(1));
    switch (node.type) {
      case NodeType.Field:
        return { type: NodeType.Field, pos, idents: [...node.idents, ...fields] };
      case NodeType.Variable:
        return { type: NodeType.Variable, pos, idents: [...node.idents, ...fields] };
      case NodeType.Bool:
      case NodeType.String:
      case NodeType.Number:
      case NodeType.Nil:
      case NodeType.Dot: {
        const text =
          node.type === NodeType.Bool
            ? String(node.value)
            : node.type === NodeType.String
              ? node.quoted
              : node.type === NodeType.Number
                ? node.text
                : node.type === NodeType.Nil
                  ? 'nil'
                  : '.';
        this.errorf(`unexpected . after term ${quote(text)}`);
      }
      // falls through: errorf never returns
      default:
        return { type: NodeType.Chain, pos, node, fields };
    }
  }

  private term(): ArgNode | null {
    const t = this.nextNonSpace();
    switch (t.type) {
      case Tok.Identifier:
        if (!this.hasFunction(t.val)) this.errorf(`function ${quote(t.val)} not defined`);
        return { type: NodeType.Identifier, pos: t.pos, name: t.val };
      case Tok.Dot:
        return { type: NodeType.Dot, pos: t.pos };
      case Tok.Nil:
        return { type: NodeType.Nil, pos: t.pos };
      case Tok.Variable:
        return this.useVar(t.pos, t.val);
      case Tok.Field:
        return { type: NodeType.Field, pos: t.pos, idents: [t.val.slice(1)] };
      case Tok.Bool:
        return { type: NodeType.Bool, pos: t.pos, value: t.val === 'true' };
      case Tok.Complex:
        this.errorf(`complex and imaginary constants are not supported: ${t.val}`);
      // falls through: errorf never returns
      case Tok.CharConstant:
      case Tok.Number:
        return this.newNumber(t);
      case Tok.LeftParen:
        return this.pipeline('parenthesized pipeline', Tok.RightParen);
      case Tok.String:
      case Tok.RawString:
        return { type: NodeType.String, pos: t.pos, quoted: t.val, text: this.unquote(t.val) };
    }
    this.backup();
    return null;
  }

  private newNumber(t: Token): ArgNode {
    if (t.type === Tok.Number && /i$/.test(t.val))
      this.errorf(`complex and imaginary constants are not supported: ${t.val}`);
    try {
      const info = parseNumber(t.val, t.type === Tok.CharConstant);
      return { type: NodeType.Number, pos: t.pos, text: t.val, value: info.value, overflows: info.overflows };
    } catch (e) {
      if (e instanceof NumberSyntaxError || e instanceof SyntaxFailure) this.errorf(e.message);
      throw e;
    }
  }

  protected unquote(lit: string): string {
    try {
      return unquoteString(lit);
    } catch (e) {
      if (e instanceof SyntaxFailure) this.errorf(e.message);
      throw e;
    }
  }

  protected newVariable(pos: number, text: string): VariableNode {
    return { type: NodeType.Variable, pos, idents: text.split('.') };
  }

  private useVar(pos: number, name: string): VariableNode {
    const v = this.newVariable(pos, name);
    if (!this.vars.includes(name)) this.errorf(`undefined variable ${quote(name)}`);
    return v;
  }
}
