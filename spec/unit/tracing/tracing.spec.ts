import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { createLogger } from '../../../actors/observe/logger.js';
import { parseTraceparent } from '../../../actors/observe/trace-context.js';
import { messageHop, putMessageHop, withHop } from '../../../actors/observe/trace-message.js';
import {
  addTraceHeaders,
  annotateSpan,
  currentScope,
  inMessageTrace,
  runInScope,
  spanParent,
  traceOf,
} from '../../../actors/observe/trace-scope.js';
import { beginHop, startTracing, stopTracing, tracingMode } from '../../../actors/observe/tracing.js';
import { DEFAULT_TRACING, compileTracing } from '../../../config/tracing.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { Journal } from '../../../supervisors/journal.js';
import { sleep } from '../../support/wait.js';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('actors/shared/tracing: modes, hops and the trace scope', () => {
  afterEach(() => stopTracing());

  it('propagate (the default): a hop passes the trace on unchanged, starts one only where asked, records nothing', async () => {
    const handle = await startTracing(DEFAULT_TRACING);
    expect(handle.mode).to.equal('propagate');
    const hop = beginHop('x', 'svc', 'server', PARENT, 'k=v', { start: false })!;
    expect(hop).to.include({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', traceparent: PARENT, tracestate: 'k=v' });
    expect(hop.span).to.equal(undefined);
    // a service carries on what it was given, unread: a malformed value has no trace id (its log lines none)
    const carried = beginHop('x', 'svc', 'server', 'garbage', undefined, { start: false })!;
    expect(carried.traceparent).to.equal('garbage');
    expect(carried.traceId).to.equal(undefined);
    expect(beginHop('x', 'svc', 'server', undefined, undefined, { start: false })).to.equal(undefined);
    // a front door starts a new trace instead of a malformed one
    const door = beginHop('x', 'svc', 'server', 'garbage', undefined, { start: true })!;
    expect(parseTraceparent(door.traceparent)?.traceId).to.equal(door.traceId);
    const fresh = beginHop('x', 'svc', 'server', undefined, undefined, { start: true })!;
    expect(parseTraceparent(fresh.traceparent)?.traceId).to.equal(fresh.traceId);
    // the message is passed on as it came: no copy
    const message = makeMessage({ Control: mapOf({ traceparent: [PARENT] }) });
    expect(
      withHop(
        message,
        messageHop(message, 'server', false, () => ({ name: 'x', service: 'svc' })),
      ),
    ).to.equal(message);
  });

  it('off (OTEL_PROPAGATORS=none): no hop, no scope', async () => {
    await startTracing(compileTracing({ OTEL_PROPAGATORS: 'none' }));
    expect(tracingMode()).to.equal('off');
    expect(beginHop('x', 'svc', 'server', PARENT, undefined, { start: true })).to.equal(undefined);
    runInScope({ traceId: 'a'.repeat(32) }, () => expect(currentScope()).to.equal(undefined));
  });

  it('record: a hop is a child span of the traceparent, and the message passed on carries the span', async () => {
    const exporter = new InMemorySpanExporter();
    await startTracing({ ...DEFAULT_TRACING, sampler: 'always_on' }, { exporter });
    const message = makeMessage({
      Control: mapOf({ traceparent: [PARENT], tracestate: ['vendor=1'], other: ['kept'] }),
    });
    const hop = messageHop(message, 'server', false, () => ({
      name: 'svc op',
      service: 'svc',
      attributes: { a: 'b' },
    }))!;
    const passed = withHop(message, hop);
    expect(passed).to.not.equal(message);
    expect(message.Control.traceparent).to.deep.equal([PARENT]);
    expect(passed.Control.other).to.deep.equal(['kept']);
    expect(passed.Control.tracestate).to.deep.equal(['vendor=1']);
    const tp = parseTraceparent(passed.Control.traceparent![0])!;
    annotateSpan(passed, () => ({ 'db.operation.name': 'SELECT' }));
    // a message without a recorded span is not described (and its attributes are not even built)
    annotateSpan(message, () => expect.fail('built for a message with no span'));
    hop.end(502, 'upstream failed');
    const [span] = exporter.getFinishedSpans();
    expect(span!.spanContext()).to.include({ traceId: tp.traceId, spanId: tp.spanId });
    expect(span!.parentSpanContext?.spanId).to.equal('00f067aa0ba902b7');
    expect(span!.attributes).to.deep.include({
      a: 'b',
      'hivenode.service': 'svc',
      'hivenode.code': 502,
      'db.operation.name': 'SELECT',
    });
    expect(span!.status).to.deep.equal({ code: 2, message: 'upstream failed' });
  });

  it('record: a message a front door made carries its span, and the next hop in this process is its child without parsing; a Control whose traceparent was replaced is parsed', async () => {
    const exporter = new InMemorySpanExporter();
    await startTracing({ ...DEFAULT_TRACING, sampler: 'always_on' }, { exporter });
    const door = beginHop('door', 'gw', 'server', undefined, undefined, { start: true })!;
    const message = makeMessage();
    putMessageHop(message, door);
    expect(message.Control.traceparent).to.deep.equal([door.traceparent]);
    expect(spanParent(message, door.traceparent)).to.equal(door.span);
    const child = messageHop(message, 'server', false, () => ({ name: 'child', service: 'svc' }))!;
    // the same trace, and the same string: the ring's map finds its hash already computed
    expect(child.traceId).to.equal(door.traceId);
    // the Control changed after the span was attached: the span is not the parent any more
    const other = makeMessage();
    putMessageHop(other, door);
    other.Control.traceparent = [PARENT];
    expect(spanParent(other, PARENT)).to.equal(undefined);
    const stranger = messageHop(other, 'server', false, () => ({ name: 'stranger', service: 'svc' }))!;
    child.end(200);
    stranger.end(200);
    door.end(200);
    const spans = new Map(exporter.getFinishedSpans().map((s) => [s.name, s]));
    const doorId = spans.get('door')!.spanContext().spanId;
    expect(spans.get('child')!.parentSpanContext).to.include({ traceId: door.traceId, spanId: doorId });
    expect(spans.get('stranger')!.parentSpanContext).to.include({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
    });
  });

  it('record with a sampler that drops: the trace still travels, nothing is exported', async () => {
    const exporter = new InMemorySpanExporter();
    await startTracing({ ...DEFAULT_TRACING, sampler: 'always_off' }, { exporter });
    const hop = beginHop('x', 'svc', 'server', undefined, undefined, { start: false })!;
    expect(parseTraceparent(hop.traceparent)?.flags).to.equal(0);
    hop.end(200);
    expect(exporter.getFinishedSpans()).to.deep.equal([]);
  });

  it('the scope holds for the synchronous run and is restored after it, even when it throws; nested scopes restore the outer one', async () => {
    await startTracing(DEFAULT_TRACING);
    const outer = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', traceparent: PARENT };
    const inner = { traceId: 'b'.repeat(32), traceparent: `00-${'b'.repeat(32)}-${'c'.repeat(16)}-01` };
    runInScope(outer, () => {
      expect(currentScope()).to.equal(outer);
      expect(() =>
        runInScope(inner, () => {
          expect(currentScope()).to.equal(inner);
          throw new Error('x');
        }),
      ).to.throw('x');
      expect(currentScope()).to.equal(outer);
    });
    expect(currentScope()).to.equal(undefined);
  });

  it('outgoing headers get the trace of a Control unless they carry their own', () => {
    const trace = traceOf(mapOf({ traceparent: [PARENT], tracestate: ['k=v'] }));
    expect(addTraceHeaders<string>({ 'content-type': 'x' }, trace, (v) => v)).to.deep.equal({
      'content-type': 'x',
      traceparent: PARENT,
      tracestate: 'k=v',
    });
    expect(addTraceHeaders<string[]>({ TraceParent: ['own'] }, trace, (v) => [v])).to.deep.equal({
      TraceParent: ['own'],
    });
    expect(addTraceHeaders<string>({}, traceOf(mapOf({})), (v) => v)).to.deep.equal({});
  });

  it('log lines and journal entries written in a scope carry trace_id, in TEXT and JSON', async () => {
    await startTracing(DEFAULT_TRACING);
    const lines = (format: string): { log: ReturnType<typeof createLogger>; text: () => Promise<string> } => {
      const stream = new PassThrough();
      const chunks: string[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c.toString()));
      return {
        log: createLogger({ format, stream }).child({ service: 'svc' }),
        text: async () => (await sleep(20), chunks.join('')),
      };
    };
    const scope = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', traceparent: PARENT };
    const text = lines('TEXT');
    const json = lines('JSON');
    runInScope(scope, () => {
      text.log.warn('inside', { extra: 1 });
      json.log.warn('inside');
    });
    text.log.info('outside');
    const [inside, outside] = (await text.text()).trim().split('\n');
    expect(inside).to.match(/WARN {2}\[svc\] inside trace_id=4bf92f3577b34da6a3ce929d0e0e4736 \{"extra":1\}$/);
    expect(outside).to.not.contain('trace_id');
    expect(JSON.parse((await json.text()).trim())).to.include({
      trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
      message: 'inside',
    });
    // a line written after an await, in the trace of the message it is about
    const later = lines('JSON');
    await sleep(1);
    inMessageTrace(makeMessage({ Control: mapOf({ traceparent: [PARENT] }) }), () => later.log.warn('after an await'));
    inMessageTrace(makeMessage({ Control: mapOf({ traceparent: ['bad'] }) }), () => later.log.warn('no trace'));
    const [afterAwait, noTrace] = (await later.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { trace_id?: string });
    expect(afterAwait!.trace_id).to.equal('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(noTrace).to.not.have.property('trace_id');
    const journal = new Journal(10, { traceOf: () => currentScope()?.traceId });
    const crash = runInScope(scope, () => journal.record({ event: 'crash', path: '/node/svc/worker' }));
    expect(crash.trace_id).to.equal('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(journal.record({ event: 'start', path: '/node/svc/worker' })).to.not.have.property('trace_id');
  });
});
