/**
 * The lexer: splits template source into text and action tokens. It runs to completion up front
 * (an error token ends the stream), which is simpler than Go's concurrent lexer and equivalent
 * because the parser consumes tokens strictly in order.
 */
import { Tok } from './tokens.js';
import type { Token } from './tokens.js';
import { isPrint } from './fmt/quote.js';
import { isSpace, isAlphaNumeric, describeRune } from './lex-scan.js';
import { LexStream } from './lex-stream.js';

const LEFT_COMMENT = '/*';
const RIGHT_COMMENT = '*/';
/** One-character tokens with no further rules. */
const SINGLE: ReadonlyMap<string, Tok> = new Map<string, Tok>([
  ['=', Tok.Assign],
  ['|', Tok.Pipe],
]);

class Lexer extends LexStream {
  private parenDepth = 0;

  run(): Token[] {
    for (;;) {
      if (!this.lexText()) break;
      if (!this.lexLeftDelim()) break;
    }
    return this.tokens;
  }

  /** Text up to the next left delimiter; returns false at end of input. */
  private lexText(): boolean {
    const x = this.input.indexOf(this.left, this.pos);
    if (x < 0) {
      this.pos = this.input.length;
      if (this.pos > this.start) this.emit(Tok.Text);
      this.tokens.push({ type: Tok.EOF, val: '', pos: this.pos, line: this.line });
      return false;
    }
    this.pos = x;
    let trim = 0;
    if (this.hasLeftTrimMarker(x + this.left.length)) {
      let i = x;
      while (i > this.start && isSpace(this.input.charAt(i - 1))) i--;
      trim = x - i;
    }
    this.pos -= trim;
    if (this.pos > this.start) this.emit(Tok.Text);
    this.pos += trim;
    this.ignore();
    return true;
  }

  private hasLeftTrimMarker(at: number): boolean {
    return this.input.charAt(at) === '-' && isSpace(this.input.charAt(at + 1));
  }

  /** At a right delimiter, optionally preceded by the " -" trim marker. */
  private atRightDelim(): { delim: boolean; trim: boolean } {
    const s = this.input;
    if (isSpace(s.charAt(this.pos)) && s.charAt(this.pos + 1) === '-' && s.startsWith(this.right, this.pos + 2))
      return { delim: true, trim: true };
    if (s.startsWith(this.right, this.pos)) return { delim: true, trim: false };
    return { delim: false, trim: false };
  }

  /** The left delimiter, a comment, and the action up to its right delimiter. */
  private lexLeftDelim(): boolean {
    this.pos += this.left.length;
    const trim = this.hasLeftTrimMarker(this.pos);
    const after = trim ? 2 : 0;
    if (this.input.startsWith(LEFT_COMMENT, this.pos + after)) {
      this.pos += after;
      this.ignore();
      return this.lexComment();
    }
    this.emit(Tok.LeftDelim);
    this.pos += after;
    this.ignore();
    this.parenDepth = 0;
    return this.lexInsideAction();
  }

  private lexComment(): boolean {
    this.pos += LEFT_COMMENT.length;
    const i = this.input.indexOf(RIGHT_COMMENT, this.pos);
    if (i < 0) return this.error('unclosed comment');
    this.pos = i + RIGHT_COMMENT.length;
    const { delim, trim } = this.atRightDelim();
    if (!delim) return this.error('comment ends before closing delimiter');
    if (trim) this.pos += 2;
    this.pos += this.right.length;
    if (trim) this.skipLeadingSpace();
    this.ignore();
    return true;
  }

  private skipLeadingSpace(): void {
    while (this.pos < this.input.length && isSpace(this.input.charAt(this.pos))) this.pos++;
  }

  private lexRightDelim(trim: boolean): boolean {
    if (trim) {
      this.pos += 2;
      this.ignore();
    }
    this.pos += this.right.length;
    this.emit(Tok.RightDelim);
    if (trim) {
      this.skipLeadingSpace();
      this.ignore();
    }
    return true;
  }

  private lexInsideAction(): boolean {
    for (;;) {
      const { delim, trim } = this.atRightDelim();
      if (delim) {
        if (this.parenDepth === 0) return this.lexRightDelim(trim);
        return this.error('unclosed left paren');
      }
      const c = this.nextChar();
      if (c === '') return this.error('unclosed action');
      if (isSpace(c)) {
        this.pos -= 1;
        this.lexSpace();
        continue;
      }
      let ok = true;
      const single = SINGLE.get(c);
      if (single !== undefined) {
        this.emit(single);
        continue;
      }
      switch (c) {
        case ':':
          if (this.nextChar() !== '=') return this.error('expected :=');
          this.emit(Tok.Declare);
          break;
        case '"':
          ok = this.lexQuoted(c, Tok.String, 'unterminated quoted string');
          break;
        case '`':
          ok = this.lexRawQuote();
          break;
        case '$':
          ok = this.lexFieldOrVariable(Tok.Variable);
          break;
        case "'":
          ok = this.lexQuoted(c, Tok.CharConstant, 'unterminated character constant');
          break;
        case '(':
          this.emit(Tok.LeftParen);
          this.parenDepth++;
          break;
        case ')':
          this.emit(Tok.RightParen);
          this.parenDepth--;
          if (this.parenDepth < 0) return this.error(`unexpected right paren ${describeRune(c)}`);
          break;
        case '.': {
          const n = this.input.charCodeAt(this.pos);
          if (this.pos < this.input.length && (n < 48 || n > 57)) {
            ok = this.lexFieldOrVariable(Tok.Field);
            break;
          }
          this.pos -= 1;
          ok = this.lexNumber();
          break;
        }
        default:
          if (c === '+' || c === '-' || (c >= '0' && c <= '9')) {
            this.pos -= 1;
            ok = this.lexNumber();
          } else if (isAlphaNumeric(c)) {
            this.pos -= c.length;
            ok = this.lexIdentifier();
          } else if (c.charCodeAt(0) < 0x80 && isPrint(c.charCodeAt(0))) {
            this.emit(Tok.Char);
          } else {
            return this.error(`unrecognized character in action: ${describeRune(c)}`);
          }
      }
      if (!ok) return false;
    }
  }

  /** A run of spaces; stops before a " -" that starts a trimmed right delimiter. */
  private lexSpace(): void {
    let n = 0;
    while (isSpace(this.input.charAt(this.pos))) {
      this.pos++;
      n++;
    }
    const at = this.pos - 1;
    if (this.input.charAt(at + 1) === '-' && this.input.startsWith(this.right, at + 2)) {
      this.pos -= 1;
      if (n === 1) return;
    }
    this.emit(Tok.Space);
  }
}

/** Tokens of `input`, ending with EOF or an error token. */
export function lex(input: string, left: string, right: string): Token[] {
  return new Lexer(input, left, right).run();
}
