/**
 * `{{ name }}` placeholders in clause text (SQL_WHERE, SQL_JOIN, SQL_HAVING, SQL_RAWVALUE, SQL_LIMIT,
 * SQL_OFFSET) become bound parameters: the text sent to the database carries a parameter marker and
 * the value travels separately, so no Data value is ever spliced into SQL text. A '%' in a value is
 * therefore a LIKE wildcard (it is data the engine matches with), and a quote is just a character.
 *
 * Placeholders count only in code: inside a comment they are text, inside a quoted literal they are
 * refused (a marker there would be the literal text '$1'), except a literal that is exactly
 * `'{{ name }}'`, which is read as the placeholder itself — the natural way to write a string value.
 */
import { BadInputError } from '../../protocol/errors.js';
import type { ValueMap } from '../../protocol/message.js';
import type { LexOptions } from './lexer.js';
import { lexSql } from './lexer.js';

/** A placeholder name: what a Data key may reasonably be. */
export const PLACEHOLDER_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const WHOLE_LITERAL = /^'\{\{\s*([^{}]*?)\s*\}\}'$/;

type ClausePart = { text: string } | { name: string };

/** Clause text split into literal SQL and placeholders. */
export interface Clause {
  parts: ClausePart[];
  /** Placeholder names in order of first use. */
  names: string[];
}

function checkName(name: string): string {
  if (!PLACEHOLDER_NAME.test(name))
    throw new Error(`placeholder '{{ ${name} }}' is not a name (letters, digits, _ . -)`);
  return name;
}

/** Splits clause text into SQL and placeholders; throws an Error describing what is wrong. */
export function parseClause(text: string, lex: LexOptions): Clause {
  const parts: ClausePart[] = [];
  const names: string[] = [];
  const pushText = (t: string): void => {
    if (t === '') return;
    const last = parts[parts.length - 1];
    if (last && 'text' in last) last.text += t;
    else parts.push({ text: t });
  };
  const pushName = (name: string): void => {
    parts.push({ name: checkName(name) });
    if (!names.includes(name)) names.push(name);
  };
  for (const seg of lexSql(text, lex)) {
    if (seg.kind === 'comment') {
      pushText(seg.text);
      continue;
    }
    if (seg.kind !== 'code') {
      const whole = seg.kind === 'string' ? WHOLE_LITERAL.exec(seg.text) : null;
      if (whole && PLACEHOLDER_NAME.test(whole[1]!)) {
        pushName(whole[1]!);
        continue;
      }
      for (const m of seg.text.matchAll(PLACEHOLDER)) {
        if (PLACEHOLDER_NAME.test(m[1]!)) {
          throw new Error(
            `placeholder '${m[0]}' is inside the quoted text ${seg.text}: write the placeholder alone ('{{ ${m[1]} }}' or {{ ${m[1]} }}) and put any % or other text into the value`,
          );
        }
      }
      pushText(seg.text);
      continue;
    }
    let pos = 0;
    for (const m of seg.text.matchAll(PLACEHOLDER)) {
      pushText(seg.text.slice(pos, m.index));
      pushName(m[1]!);
      pos = m.index + m[0].length;
    }
    const rest = seg.text.slice(pos);
    if (rest.includes('{{')) throw new Error(`'{{' without a matching '}}' in ${JSON.stringify(text)}`);
    pushText(rest);
  }
  return { parts, names };
}

/** How a bound parameter gets its value from the message Data. */
export interface ParamSource {
  /** Bind key (`p1`, `p2`, …): `$p1` in the text given to Sequelize. */
  key: string;
  /** Data name read. */
  name: string;
  /** The parameter that uses it, for error messages (SQL_WHERE, SQL_VALUEPARAMS, …). */
  use: string;
  /** 'value': first Data value as a string ([] = NULL); 'count': a non-negative integer (LIMIT/OFFSET). */
  kind: 'value' | 'count';
}

// Markers for bind positions while the text is assembled; private-use characters no SQL text needs.
const OPEN = '\uE000';
const CLOSE = '\uE001';
const MARKER = /\uE000(p\d+)\uE001/g;

/**
 * Assembles statement text and its parameter list. Sequelize rewrites `$word` and `$$` anywhere in
 * the text it is given with `bind` (a `$` in a literal would become a bind reference or vanish), so
 * `build()` doubles every `$` of the configured text exactly where Sequelize would read one; after
 * its rewrite the engine sees the configured text unchanged. Only the markers added here are read as
 * parameters.
 */
export class StatementText {
  private readonly chunks: string[] = [];
  readonly params: ParamSource[] = [];

  /** Literal SQL from configuration (identifiers already quoted). */
  text(sql: string): this {
    if (sql.includes(OPEN) || sql.includes(CLOSE))
      throw new Error('SQL text may not contain the characters U+E000 or U+E001');
    this.chunks.push(sql);
    return this;
  }

  /** A bound parameter; the same Data name and kind share one parameter. */
  param(name: string, use: string, kind: ParamSource['kind'] = 'value'): this {
    let p = this.params.find((q) => q.name === name && q.kind === kind);
    if (!p) {
      p = { key: `p${this.params.length + 1}`, name, use, kind };
      this.params.push(p);
    }
    this.chunks.push(`${OPEN}${p.key}${CLOSE}`);
    return this;
  }

  clause(clause: Clause, use: string): this {
    for (const part of clause.parts) {
      if ('text' in part) this.text(part.text);
      else this.param(part.name, use);
    }
    return this;
  }

  /** The text for `sequelize.query(text, { bind })`. */
  build(): string {
    const escaped = escapeDollars(this.chunks.join(''));
    return escaped.replace(MARKER, (_m, key: string, offset: number, whole: string) => {
      // `$p1` must start where Sequelize looks (not after a word character) and end before one
      const before = /\w/.test(whole[offset - 1] ?? ' ') ? ' ' : '';
      const after = /[\w$]/.test(whole[offset + _m.length] ?? ' ') ? ' ' : '';
      return `${before}$${key}${after}`;
    });
  }
}

/**
 * Doubles each `$` that Sequelize's bind rewriting (`/\B\$(\$|\w+)/g`) would read, so that its
 * `$$` → `$` step gives the original text back. A `$` right after a word character is not read by
 * Sequelize and stays single.
 */
export function escapeDollars(sql: string): string {
  return sql.replace(/\B\$/g, '$$$$');
}

/** The text as the database receives it (Sequelize's `$$` → `$` applied), bind markers kept: for logs. */
export function displaySql(sql: string): string {
  return sql.replace(/\B\$(\$|\w+)/g, (m: string, key: string) => (key === '$' ? '$' : m));
}

/** The bind object of one message; a missing Data name is a 400 naming it. */
export function bindValues(params: readonly ParamSource[], data: ValueMap): Record<string, string | number | null> {
  const bind: Record<string, string | number | null> = {};
  for (const p of params) {
    if (!Object.hasOwn(data, p.name))
      throw new BadInputError(`Data '${p.name}' is missing (it fills a placeholder of ${p.use})`);
    const first = data[p.name]![0];
    if (p.kind === 'count') {
      if (first === undefined || !/^\d{1,15}$/.test(first))
        throw new BadInputError(`Data '${p.name}' must be a non-negative whole number (${p.use})`);
      bind[p.key] = Number(first);
    } else {
      bind[p.key] = first ?? null;
    }
  }
  return bind;
}
