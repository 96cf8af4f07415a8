/**
 * A small SQL scanner: splits text into code, quoted literals, quoted identifiers and comments, so
 * that `{{ name }}` placeholders and `;` are recognised only where they mean something — a
 * placeholder inside a comment stays text, one inside a string literal is refused (binding there
 * would silently produce the literal `$1`), and a `;` inside a string does not split an init file.
 * It does not parse SQL; it only has to agree with the engines on where literals start and end.
 */

type SegmentKind = 'code' | 'string' | 'quoted' | 'comment';

export interface Segment {
  kind: SegmentKind;
  text: string;
}

export interface LexOptions {
  /** MySQL/MariaDB: a backslash escapes the next character inside quotes. */
  backslashEscapes?: boolean;
  /** MS SQL Server: `[name]` is a quoted identifier (elsewhere `[` is an array subscript). */
  bracketQuotes?: boolean;
  /** PostgreSQL: `$tag$ … $tag$` is a string. */
  dollarQuotes?: boolean;
  /** MySQL/MariaDB: `#` starts a comment to the end of the line, as `--` does. */
  hashComments?: boolean;
  /**
   * MySQL/MariaDB: `--` starts a comment only when a blank or a control character (or the end of the
   * text) follows it; `1--1` is one minus minus one there (MySQL manual, '--' as the start of a comment).
   */
  dashCommentNeedsSpace?: boolean;
}

/** Whether a `--` comment starts at i (the text there is `--`). */
function dashCommentAt(text: string, i: number, opts: LexOptions): boolean {
  if (!opts.dashCommentNeedsSpace) return true;
  const after = text.charCodeAt(i + 2);
  // NaN at the end of the text; a space, tab, newline or other control character
  return Number.isNaN(after) || after <= 32;
}

const DOLLAR_TAG = /\$([A-Za-z_][A-Za-z0-9_]*)?\$/y;

/** Splits SQL text into segments; throws an Error naming an unterminated literal or comment. */
export function lexSql(text: string, opts: LexOptions = {}): Segment[] {
  const out: Segment[] = [];
  let code = '';
  const flushCode = (): void => {
    if (code !== '') out.push({ kind: 'code', text: code });
    code = '';
  };
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    const next = text[i + 1];
    if ((c === '-' && next === '-' && dashCommentAt(text, i, opts)) || (c === '#' && opts.hashComments)) {
      const end = text.indexOf('\n', i);
      const stop = end === -1 ? n : end + 1;
      flushCode();
      out.push({ kind: 'comment', text: text.slice(i, stop) });
      i = stop;
      continue;
    }
    if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end === -1) throw new Error('a /* comment is not closed');
      flushCode();
      out.push({ kind: 'comment', text: text.slice(i, end + 2) });
      i = end + 2;
      continue;
    }
    if (c === "'" || c === '"' || c === '`' || (c === '[' && opts.bracketQuotes)) {
      const close = c === '[' ? ']' : c;
      let j = i + 1;
      for (;;) {
        if (j >= n) throw new Error(`a ${c} quote is not closed`);
        const d = text[j]!;
        if (opts.backslashEscapes && d === '\\' && c !== '[') {
          j += 2;
          continue;
        }
        if (d === close) {
          // a doubled closing quote is an escaped quote inside the literal
          if (text[j + 1] === close) {
            j += 2;
            continue;
          }
          break;
        }
        j++;
      }
      flushCode();
      out.push({ kind: c === "'" ? 'string' : 'quoted', text: text.slice(i, j + 1) });
      i = j + 1;
      continue;
    }
    if (c === '$' && opts.dollarQuotes && !/[A-Za-z0-9_]/.test(text[i - 1] ?? ' ')) {
      DOLLAR_TAG.lastIndex = i;
      const m = DOLLAR_TAG.exec(text);
      if (m) {
        const tag = m[0];
        const end = text.indexOf(tag, i + tag.length);
        if (end === -1) throw new Error(`a ${tag} quote is not closed`);
        flushCode();
        out.push({ kind: 'string', text: text.slice(i, end + tag.length) });
        i = end + tag.length;
        continue;
      }
    }
    code += c;
    i++;
  }
  flushCode();
  return out;
}

/** Splits a script into statements at `;` outside literals and comments; blank statements are dropped. */
export function splitStatements(text: string, opts: LexOptions = {}): string[] {
  const statements: string[] = [];
  let current = '';
  for (const seg of lexSql(text, opts)) {
    if (seg.kind !== 'code') {
      current += seg.text;
      continue;
    }
    const parts = seg.text.split(';');
    for (let k = 0; k < parts.length; k++) {
      current += parts[k];
      if (k < parts.length - 1) {
        statements.push(current);
        current = '';
      }
    }
  }
  statements.push(current);
  // a statement of only comments and blanks runs nothing; some drivers refuse an empty query
  return statements.map((s) => stripLeadingComments(s, opts).trimEnd()).filter((s) => s !== '');
}

/** True when the text has a `;` outside literals and comments (a second statement). */
export function hasStatementSeparator(text: string, opts: LexOptions = {}): boolean {
  return lexSql(text, opts).some((seg) => seg.kind === 'code' && seg.text.includes(';'));
}

/**
 * The text without the comments and blanks before its first token. Sequelize's SQLite dialect skips
 * any statement starting with "-- " without running it, and statement-kind detection reads the
 * first word, so leading comments are dropped from raw and init statements.
 */
export function stripLeadingComments(text: string, opts: LexOptions = {}): string {
  let rest = text.trimStart();
  for (;;) {
    if ((rest.startsWith('--') && dashCommentAt(rest, 0, opts)) || (opts.hashComments && rest.startsWith('#'))) {
      const end = rest.indexOf('\n');
      rest = end === -1 ? '' : rest.slice(end + 1).trimStart();
    } else if (rest.startsWith('/*')) {
      const seg = lexSql(rest, opts)[0];
      rest = seg && seg.kind === 'comment' ? rest.slice(seg.text.length).trimStart() : rest;
      if (seg?.kind !== 'comment') return rest;
    } else {
      return rest;
    }
  }
}
