import { expect } from 'chai';
import { cefEntries, decodeCef, findCef, parseCef } from '../../../actors/syslog/cef.js';

const event = (text: string) => {
  const r = parseCef(text);
  if (!r.ok) throw new Error(r.reason);
  return r.event;
};
const ext = (text: string): Record<string, string> => Object.fromEntries(event(text).extension);

describe('CEF decoder', () => {
  it('reads the seven header fields', () => {
    expect({
      ...event('CEF:0|Security|threatmanager|1.0|100|worm successfully stopped|10|src=10.0.0.1').header,
    }).to.deep.equal({
      version: '0',
      vendor: 'Security',
      product: 'threatmanager',
      device_version: '1.0',
      signature_id: '100',
      name: 'worm successfully stopped',
      severity: '10',
    });
  });

  it('unescapes \\| and \\\\ in the header and keeps other backslashes', () => {
    const h = event('CEF:0|a\\|b|c\\\\d|e\\nf|1|n|5|').header;
    expect([h.vendor, h.product, h.device_version]).to.deep.equal(['a|b', 'c\\d', 'e\\nf']);
  });

  it('lets a value run to the next " key=" and trims the separating spaces', () => {
    expect(ext('CEF:0|V|P|1|i|n|5|msg=a long  message with spaces   suser=bob smith act=blocked')).to.deep.equal({
      msg: 'a long  message with spaces',
      suser: 'bob smith',
      act: 'blocked',
    });
  });

  it('unescapes \\= \\\\ \\n \\r in extension values, left to right', () => {
    expect(ext('CEF:0|V|P|1|i|n|5|a=x\\=y b=c:\\\\dir c=l1\\nl2\\r d=\\\\n e=pipe | stays f=\\t stays')).to.deep.equal({
      a: 'x=y',
      b: 'c:\\dir',
      c: 'l1\nl2\r',
      d: '\\n',
      e: 'pipe | stays',
      f: '\\t stays',
    });
  });

  it('does not start a key at an escaped = or inside a word', () => {
    expect(ext('CEF:0|V|P|1|i|n|5|msg=a\\=b c\\=d url=http://x/?q\\=1')).to.deep.equal({
      msg: 'a=b c=d',
      url: 'http://x/?q=1',
    });
  });

  it('keeps repeated keys in order and lets header keys win', () => {
    const e = event('CEF:0|V|P|1|i|n|5|tag=a tag=b name=spoofed');
    expect(e.extension).to.deep.equal([
      ['tag', 'a'],
      ['tag', 'b'],
      ['name', 'spoofed'],
    ]);
    const entries = cefEntries(e);
    expect(entries.filter(([k]) => k === 'name')).to.deep.equal([['name', 'n']]);
    expect(entries.filter(([k]) => k === 'tag')).to.deep.equal([
      ['tag', 'a'],
      ['tag', 'b'],
    ]);
  });

  it('accepts an empty extension with or without the last pipe', () => {
    expect(event('CEF:0|V|P|1|i|n|Low|').extension).to.deep.equal([]);
    expect(event('CEF:0|V|P|1|i|n|Low').header.severity).to.equal('Low');
  });

  it('refuses truncated headers and non-numeric versions', () => {
    expect(parseCef('CEF:0|V|P|1|i').ok).to.equal(false);
    expect(parseCef('CEF:x|V|P|1|i|n|5|').ok).to.equal(false);
    expect(parseCef('not cef').ok).to.equal(false);
  });

  it('finds CEF after a syslog header but not inside a word', () => {
    expect(findCef('host CEF:0|V|P|1|i|n|5|')).to.equal(5);
    expect(findCef('xCEF:0|V')).to.equal(-1);
    expect(findCef('CEF:zero')).to.equal(-1);
    expect(decodeCef('Mar 15 host CEF:0|V|P|1|i|n|5|a=b')?.extension).to.deep.equal([['a', 'b']]);
    expect(decodeCef('CEF:0|broken')).to.equal(undefined);
  });
});
