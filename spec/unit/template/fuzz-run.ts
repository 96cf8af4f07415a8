/**
 * The template fuzz loop, shared by the unit fuzz spec (10,000 cases) and the reliability battery
 * (scaled and full): seeded random templates (mostly well-formed, some damaged) with random data,
 * under both delimiter sets. A case may fail only with TemplateError — never an internal error, never
 * anything else — and must finish within the budget (of CPU time, so a busy machine does not fail it).
 */
import { Template, TemplateError } from '../../../template/index.js';
import { cpuMsOf } from '../../cpu-time.js';
import { TEST_FUNCS } from './oracle-harness.js';
import { Gen } from './random-template.js';

/** A single case taking more CPU time than this counts as a hang. */
export const CASE_BUDGET_MS = 1_000;

export interface FuzzOutcome {
  cases: number;
  parsed: number;
  executed: number;
  /** Template errors: the clear refusals a bad template gets. */
  refused: number;
  /** CPU time of the most expensive case. */
  slowestCpuMs: number;
  /** Anything that is not a clean success or a TemplateError, or too slow: must stay empty. */
  failures: string[];
}

export function fuzzTemplates(cases: number, seed: number): FuzzOutcome {
  const out: FuzzOutcome = { cases, parsed: 0, executed: 0, refused: 0, slowestCpuMs: 0, failures: [] };
  for (let i = 0; i < cases; i++) {
    const g = new Gen(seed + i);
    let text = g.template();
    const square = i % 4 === 0;
    if (square) text = text.replaceAll('{{', '[[').replaceAll('}}', ']]');
    const data = g.data();
    const took = cpuMsOf(() => {
      try {
        const t = new Template('fuzz', {
          funcs: TEST_FUNCS,
          delims: square ? ['[[', ']]'] : ['{{', '}}'],
          maxIterations: 100_000,
          maxOutput: 1 << 20,
        });
        t.parse(text);
        out.parsed++;
        t.execute(data);
        out.executed++;
      } catch (e) {
        if (!(e instanceof TemplateError)) out.failures.push(`#${i} threw ${String(e)} for ${JSON.stringify(text)}`);
        else if (/internal error/.test(e.message))
          out.failures.push(`#${i} internal error ${e.message} for ${JSON.stringify(text)}`);
        else out.refused++;
      }
    });
    out.slowestCpuMs = Math.max(out.slowestCpuMs, took);
    if (took > CASE_BUDGET_MS) out.failures.push(`#${i} took ${Math.round(took)} ms of CPU: ${JSON.stringify(text)}`);
  }
  return out;
}
