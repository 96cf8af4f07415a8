import { expect } from 'chai';
import { decodeSyslog } from '../../../actors/syslog/decode.js';
import type { DecodeOptions } from '../../../actors/syslog/decode.js';
import { DATA_KEYS } from '../../../actors/syslog/record.js';
import { NOW } from './corpus.js';

const opts = (over: Partial<DecodeOptions> = {}): DecodeOptions => ({
  format: 'RFC3164',
  decodeCEF: false,
  remoteAddress: '192.0.2.9',
  now: NOW,
  ...over,
});
const decode = (line: string | Buffer, over: Partial<DecodeOptions> = {}) =>
  decodeSyslog(Buffer.isBuffer(line) ? line : Buffer.from(line, 'utf8'), opts(over));
const ok = (line: string | Buffer, over: Partial<DecodeOptions> = {}) => {
  const d = decode(line, over);
  if (!d.ok) throw new Error(d.reason);
  return d;
};
const FIVE = '<13>1 2024-03-15T13:22:33Z h a - - - x';
const THREE = '<13>Mar 15 13:22:33 host app: x';

describe('syslog decode (one datagram or frame → Data)', () => {
  it('produces exactly the keys of docs/ARCHITECTURE.md (Result shapes), one value each, in a value map (no Object.prototype on its chain)', () => {
    const { data } = ok(THREE);
    expect(Object.keys(data).sort()).to.deep.equal([...DATA_KEYS].sort());
    for (const k of DATA_KEYS) expect(data[k]).to.be.an('array').with.length(1);
    expect(data instanceof Object, 'Object.prototype on the chain').to.equal(false);
    expect(data.remoteaddress).to.deep.equal(['192.0.2.9']);
  });

  it('writes a 24-hour ISO timestamp', () => {
    expect(ok('<13>Mar 15 13:22:33 host app: x').data.timestamp).to.deep.equal([
      new Date(2024, 2, 15, 13, 22, 33).toISOString(),
    ]);
    expect(ok(FIVE).data.timestamp).to.deep.equal(['2024-03-15T13:22:33.000Z']);
  });

  it('detects the format per message; `expected` says whether it is the configured Format', () => {
    const seen = (line: string, format: DecodeOptions['format']) => {
      const d = ok(line, { format });
      return [d.data.format![0], d.expected];
    };
    expect(seen(FIVE, 'RFC3164')).to.deep.equal(['RFC5424', false]);
    expect(seen(THREE, 'RFC3164')).to.deep.equal(['RFC3164', true]);
    expect(seen(FIVE, 'RFC5424')).to.deep.equal(['RFC5424', true]);
    expect(seen(THREE, 'RFC5424')).to.deep.equal(['RFC3164', false]);
    expect(seen(FIVE, 'RFC6587')).to.deep.equal(['RFC5424', true]);
    expect(seen(THREE, 'RFC6587')).to.deep.equal(['RFC3164', true]);
  });

  it("Format 'auto' expects per message the format its header announces: RFC 5424 after a version, RFC 3164 otherwise; CEF on either", () => {
    const auto = (line: string, decodeCEF = false) => {
      const d = ok(line, { format: 'auto', decodeCEF });
      return [d.data.format![0], d.expected];
    };
    expect(auto(FIVE)).to.deep.equal(['RFC5424', true]);
    expect(auto(THREE)).to.deep.equal(['RFC3164', true]);
    expect(auto('<13>no header at all')).to.deep.equal(['RFC3164', true]);
    expect(auto('no PRI at all')).to.deep.equal(['RFC3164', true]);
    // announces RFC 5424 (version 1) and breaks it: forwarded, read as RFC 3164, counted invalid
    expect(auto('<13>1 2024-03-15T13:22:33 h a - - - no offset')).to.deep.equal(['RFC3164', false]);
    const cef = 'CEF:0|V|P|1.0|100|name|5|src=10.0.0.1';
    expect(auto(cef, true)).to.deep.equal(['CEF', true]);
    expect(
      ok(`<134>1 2024-03-15T11:22:33Z host app - - - ${cef}`, { format: 'auto', decodeCEF: true }),
    ).to.deep.include({ expected: true });
    expect(
      ok(`<134>1 2024-03-15T11:22:33Z host app - - - ${cef}`, { format: 'auto', decodeCEF: true }).data,
    ).to.deep.include({ format: ['RFC5424'], cef_src: ['10.0.0.1'] });
    expect(ok(`<134>Mar 15 11:22:33 host ${cef}`, { format: 'auto', decodeCEF: true }).data).to.deep.include({
      format: ['RFC3164'],
      cef_src: ['10.0.0.1'],
    });
    expect(decode('', { format: 'auto' }).ok).to.equal(false);
  });

  it('reads a line that starts like RFC 5424 but breaks it as RFC 3164, and says why', () => {
    const d = ok('<13>1 2024-03-15T13:22:33 h a - - - no offset');
    expect(d.data.format).to.deep.equal(['RFC3164']);
    expect(d.rfc5424Failure).to.contain('TIMESTAMP');
    expect(ok(FIVE).rfc5424Failure).to.equal(undefined);
  });

  it('removes the transport line end (LF, CR LF, NUL) but keeps newlines inside', () => {
    for (const end of ['\n', '\r\n', '\0', '\n\n', ''])
      expect(ok(`${THREE}\nsecond line${end}`).data.message, JSON.stringify(end)).to.deep.equal(['x\nsecond line']);
  });

  it('refuses only empty messages', () => {
    for (const empty of ['', '\n', '  \r\n', '\0']) expect(decode(empty).ok, JSON.stringify(empty)).to.equal(false);
    expect(decode('x').ok).to.equal(true);
  });

  it('decodes bytes that are not UTF-8 with replacement characters and never throws', () => {
    const bytes = Buffer.concat([
      Buffer.from('<13>Mar 15 13:22:33 host app: '),
      Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xe2, 0x82]),
      Buffer.from(' end'),
    ]);
    const m = ok(bytes).data.message![0]!;
    expect(m).to.contain('\uFFFD');
    expect(m.endsWith(' end')).to.equal(true);
    expect(ok(Buffer.from([0xc0, 0xaf, 0x80])).data.message![0]).to.match(/^\uFFFD+$/);
  });

  it('strips the RFC 5424 BOM as bytes EF BB BF, never leaves the text "BOM" behind', () => {
    const bytes = Buffer.concat([
      Buffer.from('<13>1 - h a - - - '),
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('größe'),
    ]);
    expect(ok(bytes).data.message).to.deep.equal(['größe']);
  });

  describe('CEF (DecodeCEF)', () => {
    const cef = 'CEF:0|V|P|1.0|100|name|5|src=10.0.0.1 msg=two words';
    it('is off by default: no cef_* keys, a bare CEF line is an RFC 3164 message', () => {
      const d = ok(cef);
      expect(Object.keys(d.data).filter((k) => k.startsWith('cef_'))).to.deep.equal([]);
      expect(d.data.format).to.deep.equal(['RFC3164']);
    });
    it('decodes a bare CEF line as format CEF with all header and extension keys', () => {
      const d = ok(cef, { decodeCEF: true });
      expect(d.expected).to.equal(true);
      const cefKeys = Object.fromEntries(Object.entries(d.data).filter(([k]) => k.startsWith('cef_')));
      expect(cefKeys).to.deep.equal({
        cef_version: ['0'],
        cef_vendor: ['V'],
        cef_product: ['P'],
        cef_device_version: ['1.0'],
        cef_signature_id: ['100'],
        cef_name: ['name'],
        cef_severity: ['5'],
        cef_src: ['10.0.0.1'],
        cef_msg: ['two words'],
      });
      expect(d.data.format).to.deep.equal(['CEF']);
      expect(d.data.message).to.deep.equal([cef]);
    });
    it('decodes CEF inside both envelopes and keeps the envelope format', () => {
      expect(ok(`<134>Mar 15 11:22:33 host ${cef}`, { decodeCEF: true }).data).to.deep.include({
        format: ['RFC3164'],
        hostname: ['host'],
        cef_src: ['10.0.0.1'],
      });
      expect(ok(`<134>1 2024-03-15T11:22:33Z host app - - - ${cef}`, { decodeCEF: true }).data).to.deep.include({
        format: ['RFC5424'],
        appname: ['app'],
        cef_msg: ['two words'],
      });
    });
    it('lists every value of a repeated extension key; odd key names stay plain data', () => {
      const d = ok('CEF:0|V|P|1|i|n|5|dst=a dst=b constructor=c __proto__=d', { decodeCEF: true });
      expect(d.data.cef_dst).to.deep.equal(['a', 'b']);
      expect(d.data.cef_constructor).to.deep.equal(['c']);
      expect(d.data.cef___proto__).to.deep.equal(['d']);
      expect(d.data instanceof Object, 'Object.prototype on the chain').to.equal(false);
    });
    it('forwards a malformed CEF line without cef_* keys', () => {
      const d = ok('CEF:0|only|three', { decodeCEF: true });
      expect(d.data.format).to.deep.equal(['RFC3164']);
      expect(d.data.cef_version).to.equal(undefined);
    });
  });
});
