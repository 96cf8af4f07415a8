import { expect } from 'chai';
import { disagreement, fuzz, makeCase, runLean, runLlhttp } from '../../fuzz/http1-differential.js';

/**
 * The lean wire's parser held against llhttp on 10^4 generated and mutated messages (the 10^6 run is
 * `make fuzz`, scripts/fuzz.ts): every message it accepts is one llhttp frames alike. A failure
 * names its seed and case index; `npx tsx scripts/fuzz.ts --seed S --from I --cases 1` repeats it.
 */
describe('HTTP/1.x parser against llhttp (differential fuzzing, 10^4 cases)', () => {
  it('accepts no message that llhttp refuses or frames otherwise, whole or cut into reads', function () {
    this.timeout(60_000);
    const summary = fuzz(20261129, 10_000);
    expect(summary.findings, JSON.stringify(summary.findings.slice(0, 3), null, 1)).to.deep.equal([]);
    expect(summary.cases).to.equal(10_000);
    // the cases reach both sides of the line: messages both read alike, and refusals
    expect(summary.accepted).to.be.greaterThan(4_000);
    expect(summary.leanRefused).to.be.greaterThan(2_000);
  });

  it('a case repeats from its seed and index', () => {
    expect(makeCase(7, 42).data.equals(makeCase(7, 42).data)).to.equal(true);
    expect(makeCase(7, 42).data.equals(makeCase(7, 43).data)).to.equal(false);
  });

  it('the check sees a disagreement: a parser reading one boundary wrong is caught', () => {
    // llhttp reads the second request on its own; a reader that took the length as absent would not
    const bytes = Buffer.from(
      'POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\nHost: h\r\n\r\n',
      'latin1',
    );
    const ref = runLlhttp('request', bytes);
    expect(ref.messages.map((m) => m.target)).to.deep.equal(['/a', '/b']);
    expect(disagreement(runLean('request', bytes, []), ref)).to.equal(undefined);
    const wrong = { messages: [{ ...ref.messages[0]!, body: '' }], refused: undefined };
    expect(disagreement(wrong, ref)).to.match(/message 0/);
    const extra = { messages: [...ref.messages, ref.messages[1]!], refused: undefined };
    expect(disagreement(extra, ref)).to.match(/llhttp read no such message/);
  });
});
