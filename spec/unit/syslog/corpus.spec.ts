import { expect } from 'chai';
import { decodeSyslog } from '../../../actors/syslog/decode.js';
import { DATA_KEYS } from '../../../actors/syslog/record.js';
import { CORPUS, NOW } from './corpus.js';

describe('syslog corpus: real-world lines decode to the expected Data', () => {
  it('holds at least 60 lines', () => {
    expect(CORPUS.length).to.be.at.least(60);
  });

  for (const { source, line, want } of CORPUS) {
    it(source, () => {
      const d = decodeSyslog(Buffer.from(line, 'utf8'), {
        format: 'RFC3164',
        decodeCEF: true,
        remoteAddress: '10.9.8.7',
        now: NOW,
      });
      if (!d.ok) throw new Error(`not decoded: ${d.reason}`);
      const { cef, ...fields } = want;
      for (const [k, v] of Object.entries(fields)) expect(d.data[k], k).to.deep.equal([v]);
      for (const [k, v] of Object.entries(cef ?? {})) expect(d.data[`cef_${k}`], `cef_${k}`).to.deep.equal([v]);
      if (!cef) expect(Object.keys(d.data).filter((k) => k.startsWith('cef_'))).to.deep.equal([]);
      for (const k of DATA_KEYS) expect(d.data[k], k).to.be.an('array').with.length(1);
      expect(d.data.remoteaddress).to.deep.equal(['10.9.8.7']);
      expect(d.data instanceof Object, 'Object.prototype on the chain').to.equal(false);
      // a 24-hour ISO timestamp or nothing, never a 12-hour clock
      expect(d.data.timestamp![0]).to.match(/^(|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)$/);
    });
  }
});
