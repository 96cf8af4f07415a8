/**
 * String helpers of the exec dialect, with Go's strings package semantics where the names come
 * from (ReplaceAll, Split, ToLower, ToUpper) and line-wise replacement that keeps line endings.
 */
import type { RenderBudget } from '../budget.js';

/** Occurrences of `part` (not empty) in `s`, without overlaps. */
function occurrences(s: string, part: string): number {
  let n = 0;
  for (let i = s.indexOf(part); i >= 0; i = s.indexOf(part, i + part.length)) n++;
  return n;
}

/**
 * strings.ReplaceAll: an empty `from` inserts `to` around every character. With a budget the
 * result's length is computed first: a long `to` at every character must not be built to be refused.
 */
export function replaceAll(input: string, from: string, to: string, budget?: RenderBudget): string {
  if (from === '') {
    const chars = [...input];
    budget?.ensure(input.length + (chars.length + 1) * to.length);
    return to + chars.map((c) => c + to).join('');
  }
  if (budget !== undefined && to.length > from.length)
    budget.ensure(input.length + occurrences(input, from) * (to.length - from.length));
  return input.split(from).join(to);
}

/** strings.Split: an empty separator splits into characters (none for an empty string). */
export function split(s: string, by: string): string[] {
  if (by === '') return [...s];
  return s.split(by);
}

/** The text after the first `a` in `value`, or '' when `a` does not occur. */
export function after(value: string, a: string): string {
  const i = value.indexOf(a);
  return i < 0 ? '' : value.slice(i + a.length);
}

/**
 * Replaces every line containing `search` with `newline`; `keepIndent` puts the replaced line's
 * leading spaces and tabs in front. Line endings ("\n" or "\r\n") are kept as they were.
 */
export function replaceLines(
  input: string,
  search: string,
  newline: string,
  keepIndent: boolean,
  budget?: RenderBudget,
): string {
  const lines = input.split('\n');
  if (budget !== undefined) {
    // a replaced line keeps at most its own indent, so each adds at most the new line's length
    let replaced = 0;
    for (const line of lines) if (line.includes(search)) replaced++;
    budget.ensure(input.length + replaced * newline.length);
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const cr = line.endsWith('\r');
    const body = cr ? line.slice(0, -1) : line;
    if (!body.includes(search)) continue;
    let indent = '';
    if (keepIndent) {
      let n = 0;
      while (n < body.length && (body.charAt(n) === ' ' || body.charAt(n) === '\t')) n++;
      indent = body.slice(0, n);
    }
    lines[i] = indent + newline + (cr ? '\r' : '');
  }
  return lines.join('\n');
}
