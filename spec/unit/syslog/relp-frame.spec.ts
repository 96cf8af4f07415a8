import { expect } from 'chai';
import {
  MAX_TXNR,
  RelpDecoder,
  RelpFrameError,
  encodeRelpFrame,
  nextTxnr,
  parseRelpResponse,
} from '../../../actors/syslog/relp-frame.js';
import { offersProblem, ourOffers, parseOffers } from '../../../actors/syslog/relp-offers.js';

const frames = (bytes: string | Buffer, max = 1024): Array<{ txnr: number; command: string; data: string }> =>
  new RelpDecoder(max)
    .push(Buffer.from(bytes))
    .map((f) => ({ txnr: f.txnr, command: f.command, data: f.data.toString() }));

describe('RELP frames', () => {
  it('reads frames with and without data, as librelp writes them', () => {
    const open = 'relp_version=0\nrelp_software=librelp,1.11.0,http://librelp.adiscon.com\ncommands=syslog';
    expect(frames(`1 open ${open.length} ${open}\n2 syslog 5 hello\n3 close 0\n`)).to.deep.equal([
      { txnr: 1, command: 'open', data: open },
      { txnr: 2, command: 'syslog', data: 'hello' },
      { txnr: 3, command: 'close', data: '' },
    ]);
  });

  it('reads a frame split at every byte, and data holding LF and SP', () => {
    const d = new RelpDecoder(1024);
    const bytes = Buffer.from('12 syslog 11 a\nb c\nd e f\n');
    const got = [];
    for (const b of bytes) got.push(...d.push(Buffer.from([b])));
    expect(got.map((f) => [f.txnr, f.command, f.data.toString()])).to.deep.equal([[12, 'syslog', 'a\nb c\nd e f']]);
  });

  it('takes an SP after a zero data length (librelp does)', () => {
    expect(frames('4 close 0 \n')).to.deep.equal([{ txnr: 4, command: 'close', data: '' }]);
  });

  it('refuses what is not RELP: the connection must close', () => {
    for (const bad of [
      'x syslog 1 a\n',
      '1 sys1og 1 a\n',
      '1 syslog a\n',
      '1 syslog 1 ab\n',
      '1234567890 syslog 1 a\n',
      ' 1 syslog 1 a\n',
      `1 ${'a'.repeat(33)} 0\n`,
      '1 syslog 1x\n',
    ]) {
      expect(() => frames(bad), JSON.stringify(bad)).to.throw(RelpFrameError);
    }
  });

  it('refuses a data length over the limit before reading the data', () => {
    expect(() => new RelpDecoder(100).push(Buffer.from('1 syslog 101 '))).to.throw(
      RelpFrameError,
      /over the limit of 100 bytes/,
    );
  });

  it('writes frames that read back, with no SP when there is no data', () => {
    expect(encodeRelpFrame(7, 'rsp', '').toString()).to.equal('7 rsp 0\n');
    expect(encodeRelpFrame(7, 'rsp', '200 OK').toString()).to.equal('7 rsp 6 200 OK\n');
    const text = 'ünïcode\nline';
    expect(frames(encodeRelpFrame(9, 'syslog', text))).to.deep.equal([{ txnr: 9, command: 'syslog', data: text }]);
  });

  it('numbers transactions 1 to 999,999,999, then 1 again', () => {
    expect(nextTxnr(1)).to.equal(2);
    expect(nextTxnr(MAX_TXNR)).to.equal(1);
  });

  it('reads a response: code, text and data', () => {
    expect(parseRelpResponse(Buffer.from('200 OK\nrelp_version=0\ncommands=syslog'))).to.deep.equal({
      code: 200,
      text: 'OK',
      data: 'relp_version=0\ncommands=syslog',
    });
    expect(parseRelpResponse(Buffer.from('500 queue full'))).to.deep.equal({ code: 500, text: 'queue full', data: '' });
    expect(() => parseRelpResponse(Buffer.from('OK'))).to.throw(RelpFrameError);
  });

  it('checks the offers of an open: a relp_version it speaks and the syslog command', () => {
    expect(offersProblem(parseOffers(Buffer.from(ourOffers())))).to.equal(undefined);
    expect(offersProblem(parseOffers(Buffer.from('relp_version=0\ncommands=syslog,other')))).to.equal(undefined);
    expect(offersProblem(parseOffers(Buffer.from('commands=syslog')))).to.match(/no relp_version/);
    expect(offersProblem(parseOffers(Buffer.from('relp_version=1\ncommands=syslog')))).to.match(/not supported/);
    expect(offersProblem(parseOffers(Buffer.from('relp_version=0\ncommands=other')))).to.match(/syslog/);
  });
});
