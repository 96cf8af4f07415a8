import { expect } from 'chai';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { OtlpProtobuf } from '../../../actors/observe/otlp-protobuf.js';
import { RecordedSpan } from '../../../actors/observe/recorded-span.js';
import type { OtlpSpan } from '../../otlp-decode.js';
import { decodeOtlpProtobuf } from '../../otlp-decode.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const span = (
  name: string,
  attributes: RecordedSpan['attributes'] = {},
  opts: {
    parent?: string;
    status?: RecordedSpan['status'];
    traceState?: string;
    start?: number;
    end?: number;
    kind?: SpanKind;
  } = {},
): RecordedSpan => {
  const s = new RecordedSpan(
    TRACE,
    '00f067aa0ba902b7',
    opts.parent,
    1,
    opts.traceState,
    name,
    opts.kind ?? SpanKind.SERVER,
    attributes,
    () => undefined,
  );
  if (opts.status) s.setStatus(opts.status);
  s.end();
  // the times a test names, in place of the clock's
  if (opts.start !== undefined) Object.assign(s, { startMs: opts.start, endMs: opts.end ?? opts.start });
  return s;
};

/** The batch of `spans` as the exporter writes it, in `bytes` of buffer, decoded by protobufjs. */
function batch(
  spans: RecordedSpan[],
  bytes = 1 << 20,
): { written: number; decoded: ReturnType<typeof decodeOtlpProtobuf> } {
  const encoding = new OtlpProtobuf({ resource: { 'service.name': 'svc', 'host.cpus': 2 }, scope: 'hivenode' });
  const buffer = Buffer.alloc(bytes, 0xee);
  let at = encoding.begin();
  let written = 0;
  for (const s of spans) {
    const end = encoding.write(buffer, at, s);
    if (end < 0) break;
    at = end;
    written++;
  }
  return { written, decoded: decodeOtlpProtobuf(encoding.end(buffer, at)) };
}

const only = (spans: RecordedSpan[], bytes?: number): OtlpSpan[] =>
  batch(spans, bytes).decoded.resourceSpans[0]!.scopeSpans![0]!.spans!;

describe('actors/shared/otlp-protobuf: spans as OTLP/HTTP protobuf, read back by protobufjs', () => {
  it('a batch: the resource and scope once, then every span with its ids, parent, name, kind, times and status', () => {
    const { decoded } = batch([
      span('first', {}, { start: 1764050000123 + 0.4567, end: 1764050000999 + 0.9996 }),
      span(
        'second',
        {},
        {
          parent: 'aaaaaaaaaaaaaaaa',
          status: { code: SpanStatusCode.ERROR, message: 'upstream "failed"' },
          traceState: 'vendor=x',
          kind: SpanKind.CONSUMER,
        },
      ),
    ]);
    expect(decoded.resourceSpans).to.have.length(1);
    const rs = decoded.resourceSpans[0]!;
    expect(rs.resource!.attributes).to.deep.equal([
      { key: 'service.name', value: { stringValue: 'svc' } },
      { key: 'host.cpus', value: { intValue: '2' } },
    ]);
    expect(rs.scopeSpans![0]!.scope).to.deep.equal({ name: 'hivenode' });
    const [first, second] = rs.scopeSpans![0]!.spans!;
    expect(first).to.deep.include({
      traceId: TRACE,
      spanId: '00f067aa0ba902b7',
      name: 'first',
      kind: 2,
      startTimeUnixNano: '1764050000123457000',
      endTimeUnixNano: '1764050001000000000',
    });
    expect(first).to.not.have.property('parentSpanId');
    expect(first).to.not.have.property('status');
    expect(second).to.deep.include({
      parentSpanId: 'aaaaaaaaaaaaaaaa',
      traceState: 'vendor=x',
      kind: 5,
      status: { code: 2, message: 'upstream "failed"' },
    });
  });

  it('ids the recorder kept as bytes are written from them, as their hex would be', () => {
    const withBytes = span('bytes', {}, { parent: 'aaaaaaaaaaaaaaab' });
    // each id somewhere in an array of its own, as pools and parents hold them
    const bytes = Uint8Array.from(Buffer.from(`ff${TRACE}ff00f067aa0ba902b7ffaaaaaaaaaaaaaaabff`, 'hex'));
    Object.assign(withBytes, {
      traceBytes: bytes,
      traceAt: 1,
      spanBytes: bytes,
      spanAt: 18,
      parentBytes: bytes,
      parentAt: 27,
    });
    const root = span('root');
    Object.assign(root, { traceBytes: bytes, traceAt: 1, spanBytes: bytes.slice(), spanAt: 18 });
    const [a, b] = only([withBytes, root]);
    expect(a).to.deep.include({ traceId: TRACE, spanId: '00f067aa0ba902b7', parentSpanId: 'aaaaaaaaaaaaaaab' });
    // no parent: the parent's place in the bytes is not written
    expect(b).to.deep.include({ traceId: TRACE, spanId: '00f067aa0ba902b7' });
    expect(b).to.not.have.property('parentSpanId');
  });

  it('nanoseconds past 2^53 are exact: each microsecond of a day in 2026 and of the far future', () => {
    for (const ms of [1764050000000 + 0.001, 1764050000000 + 0.999, 4102444800000.5, 0.001, 5]) {
      const expected = (
        BigInt(Math.floor(ms)) * 1_000_000n +
        BigInt(Math.round((ms - Math.floor(ms)) * 1000)) * 1000n
      ).toString();
      expect(only([span('t', {}, { start: ms })])[0]!.startTimeUnixNano, String(ms)).to.equal(expected);
    }
  });

  it('attribute values of every type: strings (non-ASCII too), booleans, integers of any sign, doubles, arrays with holes', () => {
    const attributes = {
      s: 'a"b\\c\n',
      utf: 'say ✓ — ünïcödé 𝄞',
      // 64 characters (short enough to be kept encoded) of 3 bytes: a length of two bytes
      wide: '✓'.repeat(64),
      t: true,
      f: false,
      zero: 0,
      i: 42,
      big: 2 ** 53 - 1,
      negative: -7,
      min: -(2 ** 53) + 1,
      d: 1.5,
      huge: 1e300,
      nan: NaN,
      list: ['x', 'y'],
      holes: [1, null, 3] as Array<number | null>,
    };
    const got = Object.fromEntries(
      only([span('v', attributes as RecordedSpan['attributes'])])[0]!.attributes!.map((a) => [a.key, a.value]),
    );
    expect(got).to.deep.equal({
      s: { stringValue: 'a"b\\c\n' },
      utf: { stringValue: 'say ✓ — ünïcödé 𝄞' },
      wide: { stringValue: '✓'.repeat(64) },
      t: { boolValue: true },
      f: { boolValue: false },
      zero: { intValue: '0' },
      i: { intValue: '42' },
      big: { intValue: String(2 ** 53 - 1) },
      negative: { intValue: '-7' },
      min: { intValue: String(-(2 ** 53) + 1) },
      d: { doubleValue: 1.5 },
      huge: { doubleValue: 1e300 },
      nan: { doubleValue: NaN },
      list: { arrayValue: { values: [{ stringValue: 'x' }, { stringValue: 'y' }] } },
      holes: { arrayValue: { values: [{ intValue: '1' }, {}, { intValue: '3' }] } },
    });
  });

  it('lengths of every size: fields of 127, 128, 16,383, 16,384 and 2,100,000 bytes (the content moved along for a longer length)', () => {
    for (const n of [0, 1, 127, 128, 16_383, 16_384, 2_100_000]) {
      const name = 'n'.repeat(n);
      const [s] = only([span(name, { v: 'é'.repeat(Math.floor(n / 2)), k: 1 })], 8 << 20);
      // an empty string is the field's default: protobufjs leaves it out
      expect(
        [
          (s!.name ?? '').length,
          (s!.attributes![0]!.value.stringValue ?? '').length,
          s!.attributes![1]!.value.intValue,
        ],
        `${n}`,
      ).to.deep.equal([n, Math.floor(n / 2), '1']);
    }
  });

  it('attributes written again from their first encoding read back the same: values repeated, changing, past the values kept per name', () => {
    const attrs = (i: number): RecordedSpan['attributes'] => ({
      method: i % 2 === 0 ? 'GET' : 'POST',
      count: i,
      same: 'GET',
      flag: i % 3 === 0,
      ratio: i / 4,
      path: `/p/${i % 40}`,
      list: ['a', String(i)],
    });
    // twice over: the second round finds every value the first one kept
    const spans = [
      ...Array.from({ length: 60 }, (_, i) => span(`s${i}`, attrs(i))),
      ...Array.from({ length: 60 }, (_, i) => span(`s${i}`, attrs(i))),
    ];
    const got = only(spans).map((s) => Object.fromEntries(s.attributes!.map((a) => [a.key, a.value])));
    for (const [i, a] of got.entries()) {
      const n = i % 60;
      expect(a, `span ${i}`).to.deep.equal({
        method: { stringValue: n % 2 === 0 ? 'GET' : 'POST' },
        count: { intValue: String(n) },
        same: { stringValue: 'GET' },
        flag: { boolValue: n % 3 === 0 },
        ...(Number.isInteger(n / 4) ? { ratio: { intValue: String(n / 4) } } : { ratio: { doubleValue: n / 4 } }),
        path: { stringValue: `/p/${n % 40}` },
        list: { arrayValue: { values: [{ stringValue: 'a' }, { stringValue: String(n) }] } },
      });
    }
  });

  it('spans of one name: the same name, kind and attributes again are written as before, whatever changes between them', () => {
    type A = RecordedSpan['attributes'];
    const cases: Array<[SpanKind, A]> = [
      [SpanKind.SERVER, { a: 'x', n: 1 }],
      [SpanKind.SERVER, { a: 'x', n: 1 }],
      [SpanKind.CLIENT, { a: 'x', n: 1 }],
      [SpanKind.SERVER, { n: 1, a: 'x' }],
      [SpanKind.SERVER, { a: 'x', n: 1, extra: true }],
      [SpanKind.SERVER, { a: 'x' }],
      [SpanKind.SERVER, { a: 'x', skipped: undefined, n: 1 } as A],
      [SpanKind.SERVER, { a: 'x', n: 1, list: ['p', 'q'] }],
      [SpanKind.SERVER, { a: 'x', n: 1, list: ['p', 'r'] }],
      [SpanKind.SERVER, { a: 'x', n: NaN }],
      [SpanKind.SERVER, { a: 'x', n: NaN }],
      [SpanKind.SERVER, { a: 'long', v: 'z'.repeat(2000) }],
      [SpanKind.SERVER, { a: 'long', v: 'z'.repeat(2000) }],
      ...Array.from({ length: 12 }, (_, i): [SpanKind, A] => [SpanKind.SERVER, { a: `changing ${i % 6}`, n: i }]),
      [SpanKind.SERVER, { a: 'x', n: 1 }],
      [SpanKind.SERVER, { a: 'x', n: 1 }],
    ];
    const decoded = only(cases.map(([kind, attributes]) => span('one name', attributes, { kind })));
    const value = (v: unknown): unknown =>
      typeof v === 'string'
        ? { stringValue: v }
        : typeof v === 'boolean'
          ? { boolValue: v }
          : Array.isArray(v)
            ? { arrayValue: { values: v.map(value) } }
            : Number.isNaN(v)
              ? { doubleValue: NaN }
              : { intValue: String(v) };
    for (const [i, [kind, attributes]] of cases.entries()) {
      const expected = Object.entries(attributes)
        .filter(([, v]) => v !== undefined)
        .map(([key, v]) => ({ key, value: value(v) }));
      expect([decoded[i]!.name, decoded[i]!.kind, decoded[i]!.attributes ?? []], `span ${i}`).to.deep.equal([
        'one name',
        kind + 1,
        expected,
      ]);
    }
  });

  it('an attribute kept encoded is a copy: the buffer it was first written in is written over by the next batches', () => {
    const encoding = new OtlpProtobuf({ resource: {}, scope: 'hivenode' });
    const buffer = Buffer.alloc(1 << 16);
    const attributes = { 'kept.once': 'value kept', 'kept.number': 12_345 };
    encoding.write(buffer, encoding.begin(), span('first', attributes));
    buffer.fill(0xee);
    const decoded = decodeOtlpProtobuf(
      encoding.end(buffer, encoding.write(buffer, encoding.begin(), span('again', attributes))),
    );
    expect(decoded.resourceSpans[0]!.scopeSpans![0]!.spans![0]!.attributes).to.deep.equal([
      { key: 'kept.once', value: { stringValue: 'value kept' } },
      { key: 'kept.number', value: { intValue: '12345' } },
    ]);
  });

  it('a whole span of every length around where its own length takes one, two or three bytes (two are kept for it)', () => {
    const lengths = [...Array.from({ length: 200 }, (_, i) => i), ...Array.from({ length: 300 }, (_, i) => 16_200 + i)];
    for (const n of lengths) {
      const spans = only([span('x'.repeat(n), { k: 1 }), span('after', { k: 2 })], 1 << 20);
      expect(
        spans.map((s) => [(s.name ?? '').length, s.attributes![0]!.value.intValue]),
        `name of ${n}`,
      ).to.deep.equal([
        [n, '1'],
        [5, '2'],
      ]);
    }
  });

  it('a span that does not fit in what is left is not written (-1), and the batch before it stays whole', () => {
    const small = span('small');
    const one = batch([small]);
    const size = 64 + 100;
    const { written, decoded } = batch([small, small, span('big', { blob: 'x'.repeat(10_000) }), small], size * 2);
    expect(one.written).to.equal(1);
    expect(written).to.equal(2);
    expect(decoded.resourceSpans[0]!.scopeSpans![0]!.spans!.map((s) => s.name)).to.deep.equal(['small', 'small']);
    // every length at the edge of the buffer: nothing past it is written, what was written decodes
    for (let bytes = 70; bytes < 400; bytes++) {
      const edge = batch([small, span('x'.repeat(200), { a: 'y'.repeat(bytes % 150) }), small], bytes);
      expect(edge.decoded.resourceSpans[0]!.scopeSpans![0]!.spans ?? []).to.have.length(edge.written);
    }
  });
});
