/**
 * Two texts compared line by line (the Config page's diff of an edited node file against the running
 * one): the longest common subsequence of their lines, so an edit shows as the lines removed and
 * added with the unchanged lines around them. Node files are small; a pair too large for the table
 * (over MAX_CELLS) is shown as all removed, then all added.
 */

export interface DiffLine {
  op: ' ' | '-' | '+';
  text: string;
}

const MAX_CELLS = 4_000_000;
/** Unchanged lines kept around each change; the rest is folded into one `…` line. */
const CONTEXT = 3;

export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  if (before === after) return [];
  // the common start and end need no table
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let end = 0;
  while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end++;
  const x = a.slice(start, a.length - end);
  const y = b.slice(start, b.length - end);
  const middle: DiffLine[] = [];
  if (x.length * y.length > MAX_CELLS) {
    middle.push(...x.map((text) => ({ op: '-' as const, text })), ...y.map((text) => ({ op: '+' as const, text })));
  } else {
    // lcs[i][j]: the common lines of x[i..] and y[j..]
    const w = y.length + 1;
    const lcs = new Uint32Array((x.length + 1) * w);
    for (let i = x.length - 1; i >= 0; i--)
      for (let j = y.length - 1; j >= 0; j--)
        lcs[i * w + j] =
          x[i] === y[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
    let i = 0;
    let j = 0;
    while (i < x.length || j < y.length) {
      if (i < x.length && j < y.length && x[i] === y[j]) {
        middle.push({ op: ' ', text: x[i]! });
        i++;
        j++;
        // removals first where both keep as much in common (as diff -u shows them)
      } else if (i < x.length && (j === y.length || lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!))
        middle.push({ op: '-', text: x[i++]! });
      else middle.push({ op: '+', text: y[j++]! });
    }
  }
  const all: DiffLine[] = [
    ...a.slice(0, start).map((text) => ({ op: ' ' as const, text })),
    ...middle,
    ...a.slice(a.length - end).map((text) => ({ op: ' ' as const, text })),
  ];
  return folded(all);
}

/** Unchanged runs longer than the context around the changes become one `…` line. */
function folded(lines: DiffLine[]): DiffLine[] {
  const near = lines.map(() => false);
  lines.forEach((l, i) => {
    if (l.op === ' ') return;
    for (let k = Math.max(0, i - CONTEXT); k <= Math.min(lines.length - 1, i + CONTEXT); k++) near[k] = true;
  });
  const out: DiffLine[] = [];
  lines.forEach((l, i) => {
    if (near[i]) out.push(l);
    else if (out.at(-1)?.text !== '…' || out.at(-1)?.op !== ' ') out.push({ op: ' ', text: '…' });
  });
  return out;
}
