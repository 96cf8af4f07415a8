/**
 * The template fuzz loop, shared by the unit fuzz spec (10,000 cases) and the reliability battery
 * (scaled and full): seeded random templates (mostly well-formed, some damaged) with random data,
 * under both delimiter sets. A case may fail only with TemplateError — never an internal error, never
 * anything else — and must finish within the budget.
 */
import { performance } from 'node:perf_hooks';
import { Template, TemplateError } from '../../../template/index.js';
import { TEST_FUNCS } from './oracle-harness.js';
import { Gen } from './random-template.js';

/** A single case taking longer than this counts as a hang. */
export const CASE_BUDGET_MS = 1_000;

export interface FuzzOutcome {
  cases: number;
  parsed: number;
  executed: number;
  /** Template errors: the clear refusals a bad template gets. */
  refused: number;
  slowestMs: number;
  /** Anything that is not a clean success or a TemplateError, or too slow: must stay empty. */
  failures: string[];
}

export function fuzzTemplates(cases: number, seed: number): FuzzOutcome {
  const out: FuzzOutcome = { cases, parsed: 0, executed: 0, refused: 0, slowestMs: 0, failures: [] };
  for (let i = 0; i < cases; i++) {
    const g = new Gen(seed + i);
    let text = g.template();
    const square = i % 4 === 0;
    if (square) text = text.replaceAll('{{', '[[').replaceAll('}}', ']]');
    const data = g.data();
    const started = performance.now();
    try {
      const t = new Template('fuzz', { funcs: TEST_FUNCS, delims: square ? ['[[', ']]'] : ['{{', '}}'], maxIterations: 100_000, maxOutput: 1 << 20 });
      t.parse(text);
      out.parsed++;
      t.execute(data);
      out.executed++;
    } catch (e) {
      if (!(e instanceof TemplateError)) out.failures.push(`#${i} threw ${String(e)} for ${JSON.stringify(text)}`);
      else if (/internal error/.test(e.message)) out.failures.push(`#${i} internal error ${e.message} for ${JSON.stringify(text)}`);
      else out.refused++;
    }
    const took = performance.now() - started;
    out.slowestMs = Math.max(out.slowestMs, took);
    if (took > CASE_BUDGET_MS) out.failures.push(`#${i} took ${Math.round(took)} ms: ${JSON.stringify(text)}`);
  }
  return out;
}
