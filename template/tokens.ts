/**
 * Lexical items of the template language and their Go-style rendering in parse errors
 * (keywords as <if>, long values truncated to ten runes).
 */
import { quote } from './fmt/quote.js';
import { truncateRunes, runeCount } from './utf8.js';

export const Tok = {
  Error: 'error',
  EOF: 'EOF',
  Text: 'text',
  LeftDelim: 'leftDelim',
  RightDelim: 'rightDelim',
  Space: 'space',
  Bool: 'bool',
  /** A single printable ASCII character that is not otherwise meaningful, such as ','. */
  Char: 'char',
  CharConstant: 'charConstant',
  Complex: 'complex',
  Number: 'number',
  String: 'string',
  RawString: 'rawString',
  Field: 'field',
  Variable: 'variable',
  Identifier: 'identifier',
  LeftParen: 'leftParen',
  RightParen: 'rightParen',
  Pipe: 'pipe',
  Declare: 'declare',
  Assign: 'assign',
  // keywords (printed as <word> in errors)
  Block: 'block',
  Break: 'break',
  Continue: 'continue',
  Dot: 'dot',
  Define: 'define',
  Else: 'else',
  End: 'end',
  If: 'if',
  Nil: 'nil',
  Range: 'range',
  Template: 'template',
  With: 'with',
} as const;
export type Tok = (typeof Tok)[keyof typeof Tok];

/** Words that lex as keywords. */
export const KEYWORDS: ReadonlyMap<string, Tok> = new Map<string, Tok>([
  ['block', Tok.Block],
  ['break', Tok.Break],
  ['continue', Tok.Continue],
  ['define', Tok.Define],
  ['else', Tok.Else],
  ['end', Tok.End],
  ['if', Tok.If],
  ['range', Tok.Range],
  ['nil', Tok.Nil],
  ['template', Tok.Template],
  ['with', Tok.With],
]);

const KEYWORD_TYPES: ReadonlySet<Tok> = new Set<Tok>([...KEYWORDS.values(), Tok.Dot]);

export interface Token {
  type: Tok;
  /** The source text of the item (or the message of an error item). */
  val: string;
  /** Offset in the source (UTF-16 units). */
  pos: number;
  /** Line of the item's start, from 1. */
  line: number;
}

/** How Go prints an item in "unexpected X in Y" messages. */
export function tokenString(t: Token): string {
  if (t.type === Tok.EOF) return 'EOF';
  if (t.type === Tok.Error) return t.val;
  if (KEYWORD_TYPES.has(t.type)) return '<' + t.val + '>';
  if (runeCount(t.val) > 10) return quote(truncateRunes(t.val, 10)) + '...';
  return quote(t.val);
}
