/**
 * Bad input at the template door: users' queue and exec templates are parsed and run by our own
 * engine, so random and damaged templates by the ten thousand (fuzz-run.ts, the loop the unit fuzz
 * runs 10,000 times in every `make test`) must only ever be refused with a TemplateError — the clear
 * error a bad Template gets at start or per message — never crash or hang.
 */
import { expect } from 'chai';
import { CASE_BUDGET_MS, fuzzTemplates } from '../unit/template/fuzz-run.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';

const CASES = byScale(2_000, 100_000);
// another seed than the unit fuzz, so the battery adds cases instead of repeating them
const SEED = 770_000_000;

describe('reliability: bad input at the template door', function () {
  reliabilityTest(
    `${CASES} random and damaged templates are refused with TemplateError or run; none crashes or hangs`,
    {
      suite: 'bad input',
      load: `${CASES} seeded random templates with random data, both delimiter sets`,
      faults: 'unbalanced delimiters, unknown functions, bad pipelines, wrong argument types, deep nesting',
    },
    600_000,
    async (figures) => {
      const out = fuzzTemplates(CASES, SEED);
      figures['parsed / executed / refused with TemplateError'] = `${out.parsed} / ${out.executed} / ${out.refused}`;
      figures['slowest case (CPU ms)'] = Math.round(out.slowestCpuMs * 10) / 10;
      figures['crashes or hangs'] = out.failures.length;
      expect(out.failures, out.failures.slice(0, 5).join('\n')).to.deep.equal([]);
      expect(out.refused).to.be.greaterThan(0);
      expect(out.executed).to.be.greaterThan(CASES / 10);
      expect(out.slowestCpuMs).to.be.lessThan(CASE_BUDGET_MS);
    },
  );
});
