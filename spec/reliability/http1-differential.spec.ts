/**
 * Bad input at the interceptor wire: the lean HTTP/1.x parser (actors/wire/http1-parser.ts) under
 * the kit's server and hivenode's interceptor client, held against llhttp on generated and mutated
 * requests and responses (spec/fuzz/http1-differential.ts, the check `make fuzz` runs 10^6 times
 * and the unit spec 10^4 times in every `make test`). A message it accepts that llhttp refuses or
 * frames otherwise is a request smuggled past a strict front end, or a reply read at the wrong place.
 */
import { expect } from 'chai';
import { fuzz } from '../fuzz/http1-differential.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';

const CASES = byScale(2_000, 1_000_000);
// another seed than the unit spec and `make fuzz`, so the battery adds cases instead of repeating them
const SEED = 440_000_000;

describe('reliability: bad input at the interceptor wire', function () {
  reliabilityTest(
    `${CASES} generated and mutated HTTP/1.1 messages: the lean parser accepts none that llhttp refuses or frames otherwise`,
    {
      suite: 'bad input',
      load: `${CASES} seeded requests and responses (40 % well-formed, the rest odd or mutated), 1–3 pipelined, each parsed whole and cut into reads (every byte in 30 %)`,
      faults:
        'Content-Length/Transfer-Encoding combinations, duplicate and invalid lengths, obs-fold, bare LF and CR, chunk extensions, huge sizes, unknown methods, byte mutations, truncation',
    },
    600_000,
    async (figures) => {
      const out = fuzz(SEED, CASES);
      figures['cases with messages the lean parser accepted (checked against llhttp)'] = out.accepted;
      figures['cases the lean parser refused'] = out.leanRefused;
      figures['accepted disagreements with llhttp'] = out.disagreements;
      expect(out.findings, JSON.stringify(out.findings.slice(0, 3), null, 1)).to.deep.equal([]);
      expect(out.accepted).to.be.greaterThan(CASES / 3);
    },
  );
});
