import { expect } from 'chai';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { OTLP_TAIL, nanos, otlpHead, spanJson } from '../../../actors/observe/otlp-json.js';
import { RecordedSpan, samplerOf } from '../../../actors/observe/recorded-span.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const ended = (
  name: string,
  attributes: RecordedSpan['attributes'] = {},
  parent?: string,
  status?: RecordedSpan['status'],
): RecordedSpan => {
  const span = new RecordedSpan(
    TRACE,
    '00f067aa0ba902b7',
    parent,
    1,
    undefined,
    name,
    SpanKind.SERVER,
    attributes,
    () => undefined,
  );
  if (status) span.setStatus(status);
  span.end();
  return span;
};

describe('actors/shared/otlp-json: spans as OTLP/HTTP JSON', () => {
  it('writes epoch milliseconds as decimal nanoseconds, to the microsecond', () => {
    expect(nanos(1764050000123 + 0.4567)).to.equal('1764050000123457000');
    expect(nanos(1764050000999 + 0.9996)).to.equal('1764050001000000000');
    expect(nanos(1764050000000.001)).to.equal('1764050000000001000');
    expect(nanos(5)).to.equal('5000000');
  });

  it('a span is the JSON OTLP reads: hex ids, kind from 1, typed attribute values, status, escaped text', () => {
    const span = ended('say "hi" ✓', { s: 'a"b\\c\n', i: 42, d: 1.5, b: true, list: ['x', 'y'] }, 'aaaaaaaaaaaaaaaa', {
      code: SpanStatusCode.ERROR,
      message: 'upstream "failed"',
    });
    const text = `${otlpHead({ 'service.name': 'svc' }, 'hivenode')}${spanJson(ended('first'))},${spanJson(span)}${OTLP_TAIL}`;
    // ASCII only (the exporter copies it as latin1): what is above U+007F is escaped
    expect(text).to.not.match(/[\u0080-\uffff]/);
    const doc = JSON.parse(text) as {
      resourceSpans: Array<{
        resource: { attributes: unknown[] };
        scopeSpans: Array<{ scope: { name: string }; spans: Array<Record<string, unknown>> }>;
      }>;
    };
    const rs = doc.resourceSpans[0]!;
    expect(rs.resource.attributes).to.deep.equal([{ key: 'service.name', value: { stringValue: 'svc' } }]);
    expect(rs.scopeSpans[0]!.scope.name).to.equal('hivenode');
    const [first, second] = rs.scopeSpans[0]!.spans;
    expect(first).to.not.have.property('parentSpanId');
    expect(second).to.include({
      traceId: TRACE,
      spanId: '00f067aa0ba902b7',
      parentSpanId: 'aaaaaaaaaaaaaaaa',
      name: 'say "hi" ✓',
      kind: 2,
    });
    expect(second!.attributes).to.deep.equal([
      { key: 's', value: { stringValue: 'a"b\\c\n' } },
      { key: 'i', value: { intValue: 42 } },
      { key: 'd', value: { doubleValue: 1.5 } },
      { key: 'b', value: { boolValue: true } },
      { key: 'list', value: { arrayValue: { values: [{ stringValue: 'x' }, { stringValue: 'y' }] } } },
    ]);
    expect(second!.status).to.deep.equal({ code: 2, message: 'upstream "failed"' });
    expect(BigInt(second!.endTimeUnixNano as string) >= BigInt(second!.startTimeUnixNano as string)).to.equal(true);
  });

  it('an ended span no longer changes', () => {
    const span = ended('x', { a: 1 });
    span.setAttribute('a', 2).setStatus({ code: SpanStatusCode.ERROR }).updateName('y');
    expect([span.name, span.attributes.a, span.status.code, span.isRecording()]).to.deep.equal([
      'x',
      1,
      SpanStatusCode.UNSET,
      false,
    ]);
  });

  it('samples as the OpenTelemetry samplers do: ratio by trace id, parent-based by the parent flag', () => {
    expect(samplerOf('always_on', 1)(TRACE, undefined)).to.equal(true);
    expect(samplerOf('always_off', 1)(TRACE, undefined)).to.equal(false);
    // the XOR of the id's four words, against ratio × 2^32
    expect(samplerOf('traceidratio', 0.5)('00000000000000000000000000000001', undefined)).to.equal(true);
    expect(samplerOf('traceidratio', 0.5)('ffffffff000000000000000000000000', undefined)).to.equal(false);
    const parent = (flags: number) => ({ traceId: TRACE, spanId: '00f067aa0ba902b7', flags, text: '' });
    expect(samplerOf('parentbased_always_off', 1)(TRACE, parent(1))).to.equal(true);
    expect(samplerOf('parentbased_always_on', 1)(TRACE, parent(0))).to.equal(false);
    expect(samplerOf('parentbased_always_on', 1)(TRACE, undefined)).to.equal(true);
  });
});
