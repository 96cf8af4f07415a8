/**
 * Go conformance: every case of spec/template-oracle/cases.json must produce exactly the output
 * and error text recorded in expected.json (by Go's text/template, or by hand for features newer
 * than the oracle's Go, marked source "hand"). Partial output before an error is compared too.
 */
import { expect } from 'chai';
import { loadCases, loadExpected, runCase } from './oracle-harness.js';

/**
 * Cases whose error text cannot match Go byte for byte, with the reason; only the prefix before
 * the given marker is compared for them. Empty today: every message matches exactly.
 */
const PREFIX_ONLY: Record<string, { upTo: string; reason: string }> = {};

describe('template conformance with Go text/template', () => {
  const cases = loadCases();
  const expected = loadExpected();

  it('has an expectation for every case and at least 500 cases, 100 of them errors', () => {
    for (const c of cases) expect(expected, c.name).to.have.property(c.name);
    expect(cases.length).to.be.at.least(500);
    const errors = cases.filter((c) => expected[c.name]?.error !== undefined).length;
    expect(errors).to.be.at.least(100);
  });

  for (const c of cases) {
    it(`${c.name}`, () => {
      const want = expected[c.name];
      if (want === undefined) throw new Error(`no expectation for ${c.name}; regenerate expected.json`);
      const got = runCase(c);
      const exception = PREFIX_ONLY[c.name];
      if (exception !== undefined && want.error !== undefined && got.error !== undefined) {
        const cut = (s: string): string => s.slice(0, s.indexOf(exception.upTo) + exception.upTo.length);
        expect(cut(got.error)).to.equal(cut(want.error));
      } else {
        expect(got.error, 'error').to.equal(want.error);
      }
      expect(got.output, 'output').to.equal(want.output);
    });
  }
});
