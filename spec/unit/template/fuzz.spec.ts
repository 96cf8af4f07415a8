/**
 * Robustness: 10,000 random templates (seeded, mostly well-formed, some damaged) with random data,
 * under both delimiter sets (fuzz-run.ts). Parsing and execution may fail, but only with
 * TemplateError, never an internal error, and every case finishes quickly.
 */
import { expect } from 'chai';
import { CASE_BUDGET_MS, fuzzTemplates } from './fuzz-run.js';

const CASES = 10_000;
const SEED = 20240611;

describe('template fuzz', function () {
  this.timeout(120_000);

  it(`${CASES} random templates only ever fail with TemplateError, and never hang`, () => {
    const out = fuzzTemplates(CASES, SEED);
    expect(out.failures, out.failures.slice(0, 5).join('\n')).to.deep.equal([]);
    // the generator must exercise both success and failure paths
    expect(out.parsed).to.be.greaterThan(CASES / 2);
    expect(out.executed).to.be.greaterThan(CASES / 10);
    expect(out.slowestCpuMs).to.be.lessThan(CASE_BUDGET_MS);
  });
});
