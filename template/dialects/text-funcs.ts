/**
 * String helpers of the exec dialect, with Go's strings package semantics where the names come
 * from (ReplaceAll, Split, ToLower, ToUpper) and line-wise replacement that keeps line endings.
 */

/** strings.ReplaceAll: an empty `from` inserts `to` around every character. */
export function replaceAll(input: string, from: string, to: string): string {
  if (from === '') {
    const chars = [...input];
    return to + chars.map((c) => c + to).join('');
  }
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
export function replaceLines(input: string, search: string, newline: string, keepIndent: boolean): string {
  const lines = input.split('\n');
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
