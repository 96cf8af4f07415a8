/**
 * Robustness: 10,000 random templates (seeded, mostly well-formed, some damaged) with random data,
 * under both delimiter sets. Parsing and execution may fail, but only with TemplateError, never an
 * internal error, and every case finishes quickly.
 */
import { expect } from 'chai';
import { performance } from 'node:perf_hooks';
import { Gen } from './random-template.js';
import { Template, TemplateError } from '../../../template/index.js';
import { TEST_FUNCS } from './oracle-harness.js';

const CASES = 10_000;
const SEED = 20240611;
/** A single case taking longer than this counts as a hang. */
const CASE_BUDGET_MS = 1_000;

describe('template fuzz', function () {
  this.timeout(120_000);

  it(`${CASES} random templates only ever fail with TemplateError, and never hang`, () => {
    const failures: string[] = [];
    let parsed = 0;
    let executed = 0;
    let slowest = 0;
    for (let i = 0; i < CASES; i++) {
      const g = new Gen(SEED + i);
      let text = g.template();
      const square = i % 4 === 0;
      if (square) text = text.replaceAll('{{', '[[').replaceAll('}}', ']]');
      const data = g.data();
      const started = performance.now();
      try {
        const t = new Template('fuzz', { funcs: TEST_FUNCS, delims: square ? ['[[', ']]'] : ['{{', '}}'], maxIterations: 100_000, maxOutput: 1 << 20 });
        t.parse(text);
        parsed++;
        t.execute(data);
        executed++;
      } catch (e) {
        if (!(e instanceof TemplateError)) failures.push(`#${i} threw ${String(e)} for ${JSON.stringify(text)}`);
        else if (/internal error/.test(e.message)) failures.push(`#${i} internal error ${e.message} for ${JSON.stringify(text)}`);
      }
      const took = performance.now() - started;
      slowest = Math.max(slowest, took);
      if (took > CASE_BUDGET_MS) failures.push(`#${i} took ${Math.round(took)} ms: ${JSON.stringify(text)}`);
    }
    expect(failures, failures.slice(0, 5).join('\n')).to.deep.equal([]);
    // the generator must exercise both success and failure paths
    expect(parsed).to.be.greaterThan(CASES / 2);
    expect(executed).to.be.greaterThan(CASES / 10);
    expect(slowest).to.be.lessThan(CASE_BUDGET_MS);
  });
});
