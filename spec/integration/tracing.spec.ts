import { expect } from 'chai';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { join } from 'node:path';
import type { HiveNode } from '../../node/node.js';
import { DEFAULT_TRACING, compileTracing } from '../../config/tracing.js';
import { flushTracing, startTracing, stopTracing } from '../../actors/observe/tracing.js';
import { traceById } from '../../actors/observe/trace-ring.js';
import { parseTraceparent } from '../../actors/observe/trace-context.js';
import { tempDir } from '../temp.js';
import { startTestNode } from './helpers.js';
import {
  NAMES,
  checkOneTrace,
  clientService,
  complete,
  fromReadable,
  frontServices,
  sendRequest,
  startOtlpReceiver,
  startUpstream,
} from './tracing-scenario.js';
import { sleep, until } from '../support/wait.js';

describe('tracing: one trace from the HTTP request through every hop and retry', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  beforeEach(async () => {
    upstream = await startUpstream();
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
    await stopTracing();
    await upstream.close();
  });

  const startScenario = async (logFormat: 'TEXT' | 'JSON'): Promise<{ port: number; logs: () => string }> => {
    const started = await startTestNode([
      ...frontServices(join(tempDir('hn-trace-'), 'store')),
      clientService(upstream, logFormat),
    ] as never);
    node = started.node;
    return {
      port: node.services.find((s) => s.name === NAMES.gateway)!.running.status().port as number,
      logs: started.logs,
    };
  };

  it('collected by the in-memory exporter: a client traceparent is continued through the queue retry to the upstream', async () => {
    const exporter = new InMemorySpanExporter();
    await startTracing({ ...DEFAULT_TRACING }, { exporter });
    const { port, logs } = await startScenario('JSON');
    const client = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
    const answer = await sendRequest(port, `00-${client.traceId}-${client.spanId}-01`);
    expect(answer.status).to.equal(200);
    await until(() => complete(fromReadable(exporter.getFinishedSpans())), 10_000);
    checkOneTrace({
      header: answer.traceparent,
      spans: fromReadable(exporter.getFinishedSpans()),
      upstream,
      logs: logs(),
      logFormat: 'JSON',
      parent: client,
    });
    // the console's ring holds the same trace, as plain data
    const ring = traceById(client.traceId)!;
    expect(ring.spans.map((s) => s.service)).to.include.members([NAMES.gateway, NAMES.queue, NAMES.client]);
    expect(ring.error).to.equal(true);
  });

  for (const protocol of ['http/protobuf', 'http/json'] as const) {
    it(`exported over OTLP/HTTP (${protocol}) to a local receiver that decodes the payload; the gateway starts the trace`, async () => {
      const receiver = await startOtlpReceiver();
      try {
        // protobuf is the default, as the OpenTelemetry specification makes it
        await startTracing(
          compileTracing({
            OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
            OTEL_SERVICE_NAME: 'trace-test',
            ...(protocol === 'http/json' ? { OTEL_EXPORTER_OTLP_PROTOCOL: protocol } : {}),
          }),
        );
        const { port, logs } = await startScenario('TEXT');
        const answer = await sendRequest(port);
        expect(answer.status).to.equal(200);
        await until(() => upstream.traceparents.length === 2, 10_000);
        // the last span (the second HTTP client span) ends as its answer goes back: flush until it is in
        const deadline = Date.now() + 10_000;
        while (!complete(receiver.spans) && Date.now() < deadline) {
          await flushTracing();
          await sleep(20);
        }
        expect(receiver.refused).to.deep.equal([]);
        expect([...receiver.contentTypes]).to.deep.equal([
          protocol === 'http/json' ? 'application/json' : 'application/x-protobuf',
        ]);
        expect([...receiver.serviceNames]).to.deep.equal(['trace-test']);
        checkOneTrace({ header: answer.traceparent, spans: receiver.spans, upstream, logs: logs(), logFormat: 'TEXT' });
      } finally {
        await receiver.close();
      }
    });
  }

  it('exports nothing without an endpoint, and still carries the trace: header, upstream and log lines share one id', async () => {
    await startTracing(compileTracing({}));
    const { port, logs } = await startScenario('TEXT');
    const answer = await sendRequest(port);
    const traceId = parseTraceparent(answer.traceparent)!.traceId;
    await until(() => upstream.traceparents.length === 2, 10_000);
    // nothing recorded: every hop passes on the traceparent the gateway answered with
    expect(upstream.traceparents).to.deep.equal([answer.traceparent, answer.traceparent]);
    expect(traceById(traceId)).to.equal(undefined);
    await until(() => logs().includes('request failed'));
    expect(
      logs()
        .split('\n')
        .find((l) => l.includes('request failed')),
    ).to.contain(` trace_id=${traceId}`);
  });

  it('W3C rules at the door: an upper-case traceparent starts a new trace; a 10,089-character tracestate reaches the upstream cut to 512', async () => {
    await startTracing(compileTracing({}));
    const { port } = await startScenario('TEXT');
    const upper = '00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01';
    const tracestate = `vendor=1,huge=${'z'.repeat(10_067)},other=2`;
    expect(tracestate.length).to.equal(10_089);
    const answer = await sendRequest(port, upper, tracestate);
    expect(parseTraceparent(answer.traceparent)!.traceId, 'not continued').to.not.equal(
      '4bf92f3577b34da6a3ce929d0e0e4736',
    );
    await until(() => upstream.traceparents.length === 2, 10_000);
    // a new trace carries no tracestate of the invalid parent's
    expect(upstream.tracestates).to.deep.equal(['', '']);
    await upstream.close();
    upstream = await startUpstream();
    await node!.stop(2000);
    const again = await startScenario('TEXT');
    await sendRequest(again.port, '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate);
    await until(() => upstream.traceparents.length === 2, 10_000);
    expect(upstream.tracestates).to.deep.equal(['vendor=1,other=2', 'vendor=1,other=2']);
  });

  it('OTEL_PROPAGATORS=none: no traceparent is answered or sent upstream', async () => {
    await startTracing(compileTracing({ OTEL_PROPAGATORS: 'none' }));
    const { port, logs } = await startScenario('TEXT');
    const answer = await sendRequest(port);
    expect(answer.traceparent).to.equal('');
    await until(() => upstream.traceparents.length === 2, 10_000);
    expect(upstream.traceparents).to.deep.equal(['', '']);
    await until(() => logs().includes('request failed'));
    expect(logs()).to.not.contain('trace_id');
  });
});
