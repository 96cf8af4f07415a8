/**
 * Nodes printed back as template source, the way Go's node String methods do; execution errors
 * quote the node being evaluated ("at <index .X 5>").
 */
import { NodeType } from './nodes.js';
import type { Node, ListNode, PipeNode } from './nodes.js';
import { quote } from './fmt/quote.js';
import { assertNever } from '../protocol/never.js';

export function nodeString(n: Node): string {
  switch (n.type) {
    case NodeType.List:
      return listString(n);
    case NodeType.Text:
      return n.text;
    case NodeType.Action:
      return '{{' + pipeString(n.pipe) + '}}';
    case NodeType.If:
    case NodeType.Range:
    case NodeType.With: {
      let s = '{{' + n.type + ' ' + pipeString(n.pipe) + '}}' + listString(n.list);
      if (n.elseList !== null) s += '{{else}}' + listString(n.elseList);
      return s + '{{end}}';
    }
    case NodeType.Template:
      return '{{template ' + quote(n.name) + (n.pipe === null ? '' : ' ' + pipeString(n.pipe)) + '}}';
    case NodeType.Break:
      return '{{break}}';
    case NodeType.Continue:
      return '{{continue}}';
    case NodeType.End:
      return '{{end}}';
    case NodeType.Else:
      return '{{else}}';
    case NodeType.Pipe:
      return pipeString(n);
    case NodeType.Command:
      return n.args.map((a) => (a.type === NodeType.Pipe ? '(' + pipeString(a) + ')' : nodeString(a))).join(' ');
    case NodeType.Field:
      return '.' + n.idents.join('.');
    case NodeType.Variable:
      return n.idents.join('.');
    case NodeType.Chain: {
      const head = n.node.type === NodeType.Pipe ? '(' + pipeString(n.node) + ')' : nodeString(n.node);
      return head + '.' + n.fields.join('.');
    }
    case NodeType.Identifier:
      return n.name;
    case NodeType.Dot:
      return '.';
    case NodeType.Nil:
      return 'nil';
    case NodeType.Bool:
      return n.value ? 'true' : 'false';
    case NodeType.Number:
      return n.text;
    case NodeType.String:
      return n.quoted;
    default:
      return assertNever(n, 'template node');
  }
}

function listString(l: ListNode): string {
  let s = '';
  for (const n of l.nodes) s += nodeString(n);
  return s;
}

function pipeString(p: PipeNode): string {
  let s = '';
  if (p.decls.length > 0) s = p.decls.map((d) => d.idents.join('.')).join(', ') + ' := ';
  return s + p.cmds.map((c) => nodeString(c)).join(' | ');
}
