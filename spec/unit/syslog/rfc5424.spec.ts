import { expect } from 'chai';
import { Rfc5424Failure, looksLikeRfc5424, parseRfc5424 } from '../../../actors/syslog/rfc5424.js';
import { formatStructuredData, parseStructuredData } from '../../../actors/syslog/structured-data.js';

const ok = (line: string) => {
  const r = parseRfc5424(line);
  if (!r.ok) throw new Error(`refused: ${r.reason}`);
  return r;
};
const failure = (line: string): string => {
  const r = parseRfc5424(line);
  return r.ok ? 'accepted' : r.code;
};

describe('RFC 5424 strict parser', () => {
  it('reads every header field and the message', () => {
    const { record } = ok(
      '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog 123 ID47 [a@1 b="c"] text here',
    );
    expect(record).to.deep.include({
      priority: 165,
      timestamp: '2003-10-11T22:14:15.003Z',
      hostname: 'mymachine.example.com',
      appname: 'evntslog',
      procid: '123',
      msgid: 'ID47',
      structureddata: '[a@1 b="c"]',
      message: 'text here',
      format: 'RFC5424',
    });
  });

  it('normalises timestamps to UTC ISO with milliseconds: offsets, fractions of 1..6 digits, nil', () => {
    const ts = (t: string): string => ok(`<13>1 ${t} h a - - -`).record.timestamp;
    expect(ts('2024-03-15T13:22:33Z')).to.equal('2024-03-15T13:22:33.000Z');
    expect(ts('2024-03-15T13:22:33.1Z')).to.equal('2024-03-15T13:22:33.100Z');
    expect(ts('2024-03-15T13:22:33.999999Z')).to.equal('2024-03-15T13:22:33.999Z');
    expect(ts('2024-03-15T23:30:00-05:30')).to.equal('2024-03-16T05:00:00.000Z');
    expect(ts('2024-01-01T00:30:00+01:00')).to.equal('2023-12-31T23:30:00.000Z');
    expect(ts('0099-01-01T00:00:00Z')).to.equal('0099-01-01T00:00:00.000Z');
    expect(ts('-')).to.equal('');
    expect(ts('0000-01-01T00:00:00Z')).to.equal('0000-01-01T00:00:00.000Z');
    // an offset may push the instant past year 9999: no six-digit ISO year, the timestamp is left empty
    expect(ts('9999-12-31T23:59:59-01:00')).to.equal('');
  });

  it('refuses timestamps outside RFC 5424 §6.2.3', () => {
    for (const t of [
      '2024-03-15T13:22:33',
      '2024-03-15t13:22:33Z',
      '2024-03-15T13:22:33.1234567Z',
      '2024-02-30T00:00:00Z',
      '2024-13-01T00:00:00Z',
      '2024-03-15T24:00:00Z',
      '2024-03-15T13:22:33+0100',
      '15/03/2024',
      'Mar 15 11:22:33',
    ]) {
      expect(failure(`<13>1 ${t} h a - - -`), t).to.be.oneOf([Rfc5424Failure.timestamp, Rfc5424Failure.field]);
    }
  });

  it('turns nil values into empty strings and keeps an absent MSG empty', () => {
    expect(ok('<14>1 - - - - - -').record).to.deep.include({
      timestamp: '',
      hostname: '',
      appname: '',
      procid: '',
      msgid: '',
      structureddata: '',
      message: '',
    });
    expect(ok('<14>1 - h a - - - ').record.message).to.equal('');
  });

  it('strips a BOM (U+FEFF) before MSG, but keeps the text "BOM" and a BOM elsewhere', () => {
    expect(ok('<13>1 - h a - - - \uFEFFhello').record.message).to.equal('hello');
    expect(ok('<13>1 - h a - - - BOMhello').record.message).to.equal('BOMhello');
    expect(ok('<13>1 - h a - - - a\uFEFFb').record.message).to.equal('a\uFEFFb');
  });

  it('keeps newlines, tabs and trailing spaces of MSG', () => {
    expect(ok('<13>1 - h a - - - line1\nline2\ttab  ').record.message).to.equal('line1\nline2\ttab  ');
  });

  it('refuses bad PRI, version and header fields with a reason', () => {
    expect(failure('<192>1 - h a - - - x')).to.equal(Rfc5424Failure.priority);
    expect(failure('13>1 - h a - - - x')).to.equal(Rfc5424Failure.priority);
    expect(failure('<13>2 - h a - - - x')).to.equal(Rfc5424Failure.version);
    expect(failure('<13>1 - h a - -')).to.equal(Rfc5424Failure.truncated);
    expect(failure('<13>1 -  a - - - x')).to.equal(Rfc5424Failure.field);
    expect(failure(`<13>1 - h ${'a'.repeat(49)} - - - x`)).to.equal(Rfc5424Failure.field);
    expect(failure(`<13>1 - h a - ${'m'.repeat(33)} - x`)).to.equal(Rfc5424Failure.field);
    expect(failure('<13>1 - hö a - - - x')).to.equal(Rfc5424Failure.field);
    expect(failure('<13>1 - h a - - x')).to.equal(Rfc5424Failure.structuredData);
    expect(failure('<13>1 - h a - - [a@1 b="c"]x')).to.equal(Rfc5424Failure.structuredData);
    expect(failure('<13>1 - h a - - -x')).to.equal(Rfc5424Failure.structuredData);
    const r = parseRfc5424('<13>1 nope h a - - - x');
    expect(!r.ok && r.reason).to.contain("TIMESTAMP 'nope'");
  });

  it('recognises the RFC 5424 start for format detection', () => {
    expect(looksLikeRfc5424('<13>1 ')).to.equal(true);
    expect(looksLikeRfc5424('<13>Mar 15')).to.equal(false);
    expect(looksLikeRfc5424('<13>12 x')).to.equal(false);
  });
});

describe('RFC 5424 structured data', () => {
  const sd = (s: string) => {
    const r = parseStructuredData(s, 0);
    if (!r.ok) throw new Error(r.reason);
    return r;
  };

  it('parses several elements with several params, and where it ends', () => {
    const r = sd('[a@1 x="1" y="two words"][b z=""] rest');
    expect(r.elements).to.deep.equal([
      {
        id: 'a@1',
        params: [
          { name: 'x', value: '1' },
          { name: 'y', value: 'two words' },
        ],
      },
      { id: 'b', params: [{ name: 'z', value: '' }] },
    ]);
    expect(r.end).to.equal('[a@1 x="1" y="two words"][b z=""]'.length);
  });

  it('unescapes \\" \\\\ \\] and keeps other backslashes; accepts an unescaped ] inside quotes', () => {
    expect(
      sd('[a q="say \\"hi\\"" b="c:\\\\dir" r="x\\]y" o="\\n" u="a]b"]').elements[0]!.params.map((p) => p.value),
    ).to.deep.equal(['say "hi"', 'c:\\dir', 'x]y', '\\n', 'a]b']);
  });

  it('keeps UTF-8 values', () => {
    expect(sd('[a v="größe ✓"]').elements[0]!.params[0]!.value).to.equal('größe ✓');
  });

  it('refuses malformed elements', () => {
    for (const bad of [
      '[',
      '[a',
      '[a ]',
      '[a b]',
      '[a b=c]',
      '[a b="c]',
      '[ a="b"]',
      '[a="b"]',
      '[a  b="c"]',
      '[a b="c"d="e"]',
      'x',
      `[${'i'.repeat(33)}]`,
    ]) {
      expect(parseStructuredData(bad, 0).ok, bad).to.equal(false);
    }
  });

  it('formats what it parses (escaping round trip)', () => {
    const elements = [
      { id: 'meta@32473', params: [{ name: 'k', value: 'a "quoted" \\ back ] bracket' }] },
      { id: 'empty', params: [] },
    ];
    const text = formatStructuredData(elements);
    expect(text).to.equal('[meta@32473 k="a \\"quoted\\" \\\\ back \\] bracket"][empty]');
    expect(sd(text).elements).to.deep.equal(elements);
    expect(formatStructuredData([])).to.equal('-');
    expect(() => formatStructuredData([{ id: 'bad id', params: [] }])).to.throw(RangeError);
  });
});
