import { expect } from 'chai';
import type { Admission, RingSpan } from '../../../actors/observe/trace-ring.js';
import { TraceRing } from '../../../actors/observe/trace-ring.js';

const span = (traceId: string, spanId: string, extra: Partial<RingSpan> = {}): RingSpan => ({
  traceId,
  spanId,
  name: `op ${spanId}`,
  service: 'svc',
  start: 1000,
  duration: 10,
  status: 'unset',
  attributes: {},
  ...extra,
});

describe('actors/observe/trace-ring: recent sampled traces for the console', () => {
  it('groups spans by trace, earliest first, with the root, the services, the span and the error', () => {
    const ring = new TraceRing();
    ring.add(
      span('a'.repeat(32), 'child', {
        parentSpanId: 'root',
        start: 1005,
        duration: 20,
        service: 'queue',
        status: 'error',
        statusMessage: '502 upstream',
      }),
    );
    ring.add(
      span('a'.repeat(32), 'root', {
        start: 1000,
        duration: 10,
        service: 'gateway',
        attributes: { 'hivenode.code': 200 },
      }),
    );
    const t = ring.traceById('A'.repeat(32))!;
    expect(t.traceId).to.equal('a'.repeat(32));
    expect(t.spans.map((s) => s.spanId)).to.deep.equal(['root', 'child']);
    expect(t.name).to.equal('op root');
    expect(t.start).to.equal(1000);
    expect(t.duration).to.equal(25);
    expect(t.services).to.deep.equal(['gateway', 'queue']);
    expect(t.error).to.equal(true);
    expect(t.spans[1]).to.include({ parentSpanId: 'root', status: 'error', statusMessage: '502 upstream' });
    expect(t.spans[0]!.attributes).to.deep.equal({ 'hivenode.code': 200 });
  });

  it('takes as root the span whose parent is elsewhere (another process) when no span is parentless', () => {
    const ring = new TraceRing();
    ring.add(span('b'.repeat(32), 'x', { parentSpanId: 'y', start: 2000 }));
    ring.add(span('b'.repeat(32), 'y', { parentSpanId: 'remote', start: 1990 }));
    expect(ring.traceById('b'.repeat(32))!.name).to.equal('op y');
  });

  it('lists the most recently touched traces first, up to the limit, without spans', () => {
    const ring = new TraceRing();
    for (const id of ['1', '2', '3']) ring.add(span(id.repeat(32), `s${id}`));
    // a span arriving later (a retry) makes its trace recent again
    ring.add(span('1'.repeat(32), 's1b'));
    const recent = ring.recentTraces(2);
    expect(recent.map((t) => t.traceId)).to.deep.equal(['1'.repeat(32), '3'.repeat(32)]);
    expect(recent[0]!.spanCount).to.equal(2);
    expect(recent[0]).to.not.have.property('spans');
    expect(ring.recentTraces(0)).to.deep.equal([]);
  });

  it('is bounded: the least recent trace goes past maxTraces, spans past maxSpansPerTrace are counted, not kept', () => {
    const ring = new TraceRing(2, 3);
    for (const id of ['1', '2', '3']) ring.add(span(id.repeat(32), 's'));
    expect(ring.size).to.equal(2);
    expect(ring.traceById('1'.repeat(32))).to.equal(undefined);
    for (let i = 0; i < 5; i++) ring.add(span('3'.repeat(32), `t${i}`));
    const t = ring.traceById('3'.repeat(32))!;
    expect(t.spans).to.have.length(3);
    expect(t.droppedSpans).to.equal(3);
    expect(() => new TraceRing(0)).to.throw(RangeError);
  });

  it('is bounded in spans over all traces: the oldest traces go until the spans fit, never the newest', () => {
    const ring = new TraceRing(10, 10, 4);
    ring.add(span('1'.repeat(32), 'a'));
    ring.add(span('1'.repeat(32), 'b'));
    ring.add(span('2'.repeat(32), 'c'));
    ring.add(span('3'.repeat(32), 'd'));
    expect(ring.size).to.equal(3);
    ring.add(span('3'.repeat(32), 'e'));
    expect(ring.recentTraces().map((t) => t.traceId[0])).to.deep.equal(['3', '2']);
    for (const id of ['f', 'g', 'h', 'i']) ring.add(span('3'.repeat(32), id));
    expect(ring.recentTraces().map((t) => [t.traceId[0], t.spanCount])).to.deep.equal([['3', 6]]);
  });

  it('reads a lazily added span once, when the ring is read', () => {
    const ring = new TraceRing();
    let made = 0;
    ring.addLazy('d'.repeat(32), 'lazy', (name) => (made++, span('d'.repeat(32), name)));
    expect(made).to.equal(0);
    expect(ring.traceById('d'.repeat(32))!.spans[0]!.spanId).to.equal('lazy');
    ring.traceById('d'.repeat(32));
    expect(made).to.equal(1);
  });

  it('hands out copies: changing what it returned or what was added changes nothing kept', () => {
    const ring = new TraceRing();
    const added = span('c'.repeat(32), 's', { attributes: { a: 1 } });
    ring.add(added);
    added.attributes.a = 2;
    ring.traceById('c'.repeat(32))!.spans[0]!.attributes.a = 3;
    expect(ring.traceById('c'.repeat(32))!.spans[0]!.attributes).to.deep.equal({ a: 1 });
  });

  it('takes at most newTracesPerSecond new traces a second, error traces on a budget of their own; a held trace takes every span', () => {
    let now = 5_000;
    const ring = new TraceRing(10, 10, 100, 2, () => now);
    for (const id of ['1', '2', '3']) ring.add(span(id.repeat(32), 'a'));
    expect(ring.recentTraces().map((t) => t.traceId[0])).to.deep.equal(['2', '1']);
    ring.add(span('1'.repeat(32), 'b'));
    expect(ring.traceById('1'.repeat(32))!.spans).to.have.length(2);
    for (const id of ['4', '5', '6'])
      ring.addLazy(id.repeat(32), 'e', (name) => span(id.repeat(32), name, { status: 'error' }), true);
    expect(ring.recentTraces().map((t) => t.traceId[0])).to.deep.equal(['5', '4', '1', '2']);
    now += 1_000;
    ring.add(span('3'.repeat(32), 'a'));
    expect(ring.traceById('3'.repeat(32))).to.not.equal(undefined);
    expect(() => new TraceRing(1, 1, 1, 0)).to.throw(RangeError);
  });

  it('a trace begun here is admitted when it begins: its spans come in then (on the budget of that second), those of one refused only when they end in error', () => {
    const now = 5_000;
    const ring = new TraceRing(10, 10, 100, 2, () => now);
    const add = (id: string, name: string, admission: Admission, error = false): void =>
      ring.addLazy(
        id.repeat(32),
        name,
        (n) => span(id.repeat(32), n, error ? { status: 'error' } : {}),
        error,
        now,
        admission,
      );
    expect([ring.admitNew(now), ring.admitNew(now), ring.admitNew(now)]).to.deep.equal(['in', 'in', 'out']);
    // the budget was spent when the traces began: an unknown trace ending now is refused, an admitted one comes in
    add('9', 'late', 'unknown');
    add('1', 'child', 'in');
    add('1', 'root', 'in');
    add('3', 'refused', 'out');
    add('3', 'failed', 'out', true);
    expect(ring.recentTraces().map((t) => [t.traceId[0], t.spanCount])).to.deep.equal([
      ['3', 1],
      ['1', 2],
    ]);
    expect(ring.traceById('3'.repeat(32))!.spans.map((s) => s.spanId)).to.deep.equal(['failed']);
    // a refused trace held after all (its error span came in) takes its other spans again only as 'unknown' ones
    add('3', 'after', 'unknown');
    expect(ring.traceById('3'.repeat(32))!.spans.map((s) => s.spanId)).to.deep.equal(['failed', 'after']);
  });
});
