/**
 * The statement half of the parser: text, actions, if/with/range with else chains, define, block,
 * template, break and continue. One call parses one source text into its named trees.
 */
import { lex } from './lexer.js';
import { Tok } from './tokens.js';
import type { Token } from './tokens.js';
import { NodeType, isEmptyTree } from './nodes.js';
import type { ListNode, ListItem, Tree, PipeNode, TemplateNode, EndNode, ElseNode } from './nodes.js';
import { nodeString } from './node-string.js';
import { PipelineParser } from './parse-pipeline.js';
import { quote } from './fmt/quote.js';

type ControlType = typeof NodeType.If | typeof NodeType.Range | typeof NodeType.With;

class Parser extends PipelineParser {
  /** Trees produced by this parse, by name. */
  readonly trees = new Map<string, Tree>();

  constructor(
    tokens: Token[],
    private readonly name: string,
    private readonly text: string,
    hasFunction: (name: string) => boolean,
  ) {
    super(tokens, name, hasFunction);
  }

  parse(): Map<string, Tree> {
    const root: ListNode = { type: NodeType.List, pos: this.peek().pos, nodes: [] };
    while (this.peek().type !== Tok.EOF) {
      if (this.peek().type === Tok.LeftDelim) {
        const at = this.index;
        this.next();
        if (this.nextNonSpace().type === Tok.Define) {
          this.parseDefinition();
          continue;
        }
        this.index = at;
      }
      const n = this.textOrAction();
      if (n.type === NodeType.End || n.type === NodeType.Else) this.errorf(`unexpected ${nodeString(n)}`);
      root.nodes.push(n);
    }
    this.add({ name: this.name, parseName: this.name, text: this.text, root });
    return this.trees;
  }

  /** Adds a tree; a second non-empty definition of one name in one parse is an error. */
  private add(tree: Tree): void {
    const old = this.trees.get(tree.name);
    if (old === undefined || isEmptyTree(old.root)) {
      this.trees.set(tree.name, tree);
      return;
    }
    if (!isEmptyTree(tree.root)) this.errorf(`template: multiple definition of template ${quote(tree.name)}`);
  }

  /** Runs `body` as the parse of a nested tree: fresh variables and loop depth. */
  private nested<T>(body: () => T): T {
    const vars = this.vars;
    const depth = this.rangeDepth;
    const actionLine = this.actionLine;
    this.vars = ['$'];
    this.rangeDepth = 0;
    this.actionLine = 0;
    try {
      return body();
    } finally {
      this.vars = vars;
      this.rangeDepth = depth;
      this.actionLine = actionLine;
    }
  }

  private parseDefinition(): void {
    const context = 'define clause';
    const t = this.nextNonSpace();
    if (t.type !== Tok.String && t.type !== Tok.RawString) this.unexpected(t, context);
    const name = this.unquote(t.val);
    this.expect(Tok.RightDelim, context);
    this.nested(() => {
      const [root, end] = this.itemList();
      if (end.type !== NodeType.End) this.errorf(`unexpected ${nodeString(end)} in ${context}`);
      this.add({ name, parseName: this.name, text: this.text, root });
    });
  }

  /** Items up to {{end}} or {{else}}, which is returned with the list. */
  private itemList(): [ListNode, EndNode | ElseNode] {
    const list: ListNode = { type: NodeType.List, pos: this.peekNonSpace().pos, nodes: [] };
    while (this.peekNonSpace().type !== Tok.EOF) {
      const n = this.textOrAction();
      if (n.type === NodeType.End || n.type === NodeType.Else) return [list, n];
      list.nodes.push(n);
    }
    this.errorf('unexpected EOF');
  }

  private textOrAction(): ListItem | EndNode | ElseNode {
    const t = this.nextNonSpace();
    switch (t.type) {
      case Tok.Text:
        return { type: NodeType.Text, pos: t.pos, text: t.val };
      case Tok.LeftDelim: {
        this.actionLine = t.line;
        const n = this.action();
        this.actionLine = 0;
        return n;
      }
      default:
        this.unexpected(t, 'input');
    }
  }

  private action(): ListItem | EndNode | ElseNode {
    const t = this.nextNonSpace();
    switch (t.type) {
      case Tok.Block:
        return this.blockControl();
      case Tok.Break:
      case Tok.Continue:
        return this.loopControl(t);
      case Tok.Else:
        return this.elseControl();
      case Tok.End:
        return { type: NodeType.End, pos: this.expect(Tok.RightDelim, 'end').pos };
      case Tok.If:
        return this.control(NodeType.If);
      case Tok.Range:
        return this.control(NodeType.Range);
      case Tok.Template:
        return this.templateControl();
      case Tok.With:
        return this.control(NodeType.With);
    }
    this.backup();
    const first = this.peek();
    // variables declared here persist until the enclosing {{end}}
    return { type: NodeType.Action, pos: first.pos, line: first.line, pipe: this.pipeline('command', Tok.RightDelim) };
  }

  private loopControl(t: Token): ListItem {
    const word = t.type === Tok.Break ? 'break' : 'continue';
    const next = this.nextNonSpace();
    if (next.type !== Tok.RightDelim) this.unexpected(next, `{{${word}}}`);
    if (this.rangeDepth === 0) this.errorf(`{{${word}}} outside {{range}}`);
    return t.type === Tok.Break ? { type: NodeType.Break, pos: t.pos } : { type: NodeType.Continue, pos: t.pos };
  }

  /** {{else}}, or the start of {{else if}} / {{else with}}, whose keyword is left unread. */
  private elseControl(): ElseNode {
    const peek = this.peekNonSpace();
    if (peek.type === Tok.If || peek.type === Tok.With) return { type: NodeType.Else, pos: peek.pos };
    const t = this.expect(Tok.RightDelim, 'else');
    return { type: NodeType.Else, pos: t.pos };
  }

  /** if, range and with: pipeline, body, optional else (or else-if / else-with chain), end. */
  private control(type: ControlType): ListItem {
    const mark = this.vars.length;
    try {
      const pipe = this.pipeline(type, Tok.RightDelim);
      if (type === NodeType.Range) this.rangeDepth++;
      const [list, next] = this.itemList();
      if (type === NodeType.Range) this.rangeDepth--;
      let elseList: ListNode | null = null;
      if (next.type === NodeType.Else) {
        const chained = this.peek().type;
        if ((type === NodeType.If && chained === Tok.If) || (type === NodeType.With && chained === Tok.With)) {
          // {{else if x}} is {{else}}{{if x}}...{{end}}{{end}} sharing one {{end}}
          this.next();
          elseList = { type: NodeType.List, pos: next.pos, nodes: [this.control(type)] };
        } else {
          const [l, end] = this.itemList();
          if (end.type !== NodeType.End) this.errorf(`expected end; found ${nodeString(end)}`);
          elseList = l;
        }
      }
      return { type, pos: pipe.pos, line: pipe.line, pipe, list, elseList } as ListItem;
    } finally {
      this.popVars(mark);
    }
  }

  private templateName(t: Token, context: string): string {
    if (t.type !== Tok.String && t.type !== Tok.RawString) this.unexpected(t, context);
    return this.unquote(t.val);
  }

  private templateControl(): TemplateNode {
    const context = 'template clause';
    const t = this.nextNonSpace();
    const name = this.templateName(t, context);
    let pipe: PipeNode | null = null;
    if (this.nextNonSpace().type !== Tok.RightDelim) {
      this.backup();
      pipe = this.pipeline(context, Tok.RightDelim);
    }
    return { type: NodeType.Template, pos: t.pos, line: t.line, name, pipe };
  }

  /** {{block "name" pipeline}} body {{end}}: defines "name" and executes it in place. */
  private blockControl(): TemplateNode {
    const context = 'block clause';
    const t = this.nextNonSpace();
    const name = this.templateName(t, context);
    const pipe = this.pipeline(context, Tok.RightDelim);
    this.nested(() => {
      const [root, end] = this.itemList();
      if (end.type !== NodeType.End) this.errorf(`unexpected ${nodeString(end)} in ${context}`);
      this.add({ name, parseName: this.name, text: this.text, root });
    });
    return { type: NodeType.Template, pos: t.pos, line: t.line, name, pipe };
  }
}

/** Parses `text` as template `name`; returns every tree it defines (the main one under `name`). */
export function parse(
  name: string,
  text: string,
  left: string,
  right: string,
  hasFunction: (name: string) => boolean,
): Map<string, Tree> {
  return new Parser(lex(text, left, right), name, text, hasFunction).parse();
}
