/**
 * Writes cases.json from the group files: every case as written, plus a twin using the queue
 * dialect's [[ ]] delimiters (unless the case opts out or already contains [[ or ]]).
 * Run: npx tsx spec/template-oracle/build-cases.ts  (then regenerate expected.json with Go).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import type { CaseDef, Group, OracleCase } from './cases/types.js';
import { text, trim, comments, delims } from './cases/text.js';
import { constants } from './cases/constants.js';
import { fields, variables } from './cases/fields.js';
import { ifElse, withElse, range } from './cases/control.js';
import { templates } from './cases/templates.js';
import { pipelines, logic, functions } from './cases/pipelines.js';
import { comparisons, lenIndexSlice } from './cases/builtins.js';
import { print, printf } from './cases/printing.js';
import { escapers, missingkey, parseErrors } from './cases/misc.js';
import { fmtEdges, positions, lexing, regressions } from './cases/stress.js';

export const GROUPS: Group[] = [
  text,
  trim,
  comments,
  delims,
  constants,
  fields,
  variables,
  ifElse,
  withElse,
  range,
  templates,
  pipelines,
  logic,
  functions,
  comparisons,
  lenIndexSlice,
  print,
  printf,
  escapers,
  missingkey,
  parseErrors,
  fmtEdges,
  positions,
  lexing,
  regressions,
];

const swap = (s: string): string => s.replaceAll('{{', '[[').replaceAll('}}', ']]');
const hasSquare = (s: string): boolean => s.includes('[[') || s.includes(']]');

function mirror(c: CaseDef): CaseDef | undefined {
  if (c.mirror === false || c.delims !== undefined) return undefined;
  const texts = [c.template, ...(c.pre ?? [])];
  if (texts.some(hasSquare)) return undefined;
  // a hand-written expectation cannot follow "[" or "]" text that the swap would merge into delimiters
  if (c.hand !== undefined && texts.some((t) => t.includes('[') || t.includes(']'))) return undefined;
  const twin: CaseDef = { ...c, name: c.name + ' [[]]', template: swap(c.template), delims: ['[[', ']]'] };
  if (c.pre !== undefined) twin.pre = c.pre.map(swap);
  if (c.hand !== undefined)
    twin.hand = { ...c.hand, ...(c.hand.error === undefined ? {} : { error: swap(c.hand.error) }) };
  return twin;
}

export function buildCases(): OracleCase[] {
  const out: OracleCase[] = [];
  for (const g of GROUPS) {
    for (const c of g.cases) {
      out.push({ group: g.group, ...c });
      const twin = mirror(c);
      if (twin !== undefined) out.push({ group: g.group, ...twin });
    }
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const cases = buildCases();
  const names = new Set<string>();
  for (const c of cases) {
    if (names.has(c.name)) throw new Error(`duplicate case name ${c.name}`);
    names.add(c.name);
  }
  const file = join(dirname(fileURLToPath(import.meta.url)), 'cases.json');
  // one case per line: diffs stay readable without repeating the shared data's indentation
  writeFileSync(file, '[\n' + cases.map((c) => JSON.stringify(c)).join(',\n') + '\n]\n');
  process.stdout.write(`${cases.length} cases written to ${file}\n`);
}
