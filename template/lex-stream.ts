/**
 * The lexer's token stream: position bookkeeping, emitting tokens with their line, and the
 * scanners for the tokens found inside actions (identifiers, fields, variables, literals).
 */
import { Tok, KEYWORDS } from './tokens.js';
import type { Token } from './tokens.js';
import { quote } from './fmt/quote.js';
import { isSpace, isAlphaNumeric, charAt, describeRune, scanNumber, scanQuoted, countNewlines } from './lex-scan.js';

export class LexStream {
  protected readonly tokens: Token[] = [];
  protected pos = 0;
  protected start = 0;
  protected line = 1;
  protected startLine = 1;

  constructor(
    protected readonly input: string,
    protected readonly left: string,
    protected readonly right: string,
  ) {}

  /** Moves `start` to `pos`, counting the newlines skipped. */
  protected ignore(): void {
    this.line += countNewlines(this.input, this.start, this.pos);
    this.start = this.pos;
    this.startLine = this.line;
  }

  protected emit(type: Tok): void {
    const val = this.input.slice(this.start, this.pos);
    this.tokens.push({ type, val, pos: this.start, line: this.startLine });
    this.line += countNewlines(this.input, this.start, this.pos);
    this.start = this.pos;
    this.startLine = this.line;
  }

  /** Emits an error token; lexing stops. */
  protected error(message: string): false {
    this.tokens.push({ type: Tok.Error, val: message, pos: this.start, line: this.startLine });
    return false;
  }

  protected peekChar(): string {
    return charAt(this.input, this.pos);
  }

  protected nextChar(): string {
    const c = this.peekChar();
    this.pos += c.length;
    return c;
  }

  protected atTerminator(): boolean {
    const c = this.peekChar();
    if (c === '' || isSpace(c)) return true;
    switch (c) {
      case '.':
      case ',':
      case '|':
      case ':':
      case ')':
      case '(':
        return true;
    }
    return this.input.startsWith(this.right, this.pos);
  }

  protected lexIdentifier(): boolean {
    for (;;) {
      const c = this.peekChar();
      if (!isAlphaNumeric(c)) break;
      this.pos += c.length;
    }
    if (!this.atTerminator()) return this.error(`bad character ${describeRune(this.peekChar())}`);
    const word = this.input.slice(this.start, this.pos);
    const kw = KEYWORDS.get(word);
    if (kw !== undefined) this.emit(kw);
    else if (word.charAt(0) === '.') this.emit(Tok.Field);
    else if (word === 'true' || word === 'false') this.emit(Tok.Bool);
    else this.emit(Tok.Identifier);
    return true;
  }

  /** `$name` or `.name`; a bare '$' is a variable and a bare '.' is dot. */
  protected lexFieldOrVariable(type: Tok): boolean {
    if (this.atTerminator()) {
      this.emit(type === Tok.Variable ? Tok.Variable : Tok.Dot);
      return true;
    }
    let c = '';
    for (;;) {
      c = this.peekChar();
      if (!isAlphaNumeric(c)) break;
      this.pos += c.length;
    }
    if (!this.atTerminator()) return this.error(`bad character ${describeRune(c)}`);
    this.emit(type);
    return true;
  }

  /** A "..." string or '...' character constant; the opening quote is already read. */
  protected lexQuoted(q: string, type: Tok, unterminated: string): boolean {
    const end = scanQuoted(this.input, this.pos, q);
    if (end < 0) return this.error(unterminated);
    this.pos = end;
    this.emit(type);
    return true;
  }

  protected lexRawQuote(): boolean {
    const end = this.input.indexOf('`', this.pos);
    if (end < 0) return this.error('unterminated raw quoted string');
    this.pos = end + 1;
    this.emit(Tok.RawString);
    return true;
  }

  /** A number, or a complex constant like 1+2i (emitted so the parser can reject it clearly). */
  protected lexNumber(): boolean {
    const first = scanNumber(this.input, this.pos);
    this.pos = first.end;
    if (!first.ok) return this.error(`bad number syntax: ${quote(this.input.slice(this.start, this.pos))}`);
    const sign = this.input.charAt(this.pos);
    if (sign === '+' || sign === '-') {
      const second = scanNumber(this.input, this.pos);
      this.pos = second.end;
      if (!second.ok || this.input.charAt(this.pos - 1) !== 'i') {
        return this.error(`bad number syntax: ${quote(this.input.slice(this.start, this.pos))}`);
      }
      this.emit(Tok.Complex);
      return true;
    }
    this.emit(Tok.Number);
    return true;
  }
}
