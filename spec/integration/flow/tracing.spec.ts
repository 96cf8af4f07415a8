/**
 * A run is one trace across its steps and retries (docs/ARCHITECTURE.md, The life of a run): every
 * attempt of a step is a span of the flow, child of the span that started the run, and the service a
 * step reaches continues from it.
 */
import { expect } from 'chai';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { DEFAULT_TRACING } from '../../../config/tracing.js';
import { startTracing, stopTracing } from '../../../actors/observe/tracing.js';
import type { HiveNode } from '../../../node/node.js';
import { fromReadable } from '../tracing-scenario.js';
import { flowDir, flowNode, scriptedTarget, startRun, stopFlowNodes } from './helpers.js';
import { until } from '../../support/wait.js';

const TRACE = '0af7651916cd43dd8448eb211c80319c';

describe('flow tracing', function () {
  this.timeout(20_000);
  let node: HiveNode;
  let exporter: InMemorySpanExporter;
  beforeEach(async () => {
    exporter = new InMemorySpanExporter();
    await startTracing({ ...DEFAULT_TRACING }, { exporter });
  });
  afterEach(async () => {
    await stopFlowNodes();
    await stopTracing();
  });

  it('each attempt of each step is a span of the run trace; the target continues from it', async () => {
    ({ node } = await flowNode(
      flowDir(),
      {
        steps: [
          { name: 'one', call: 'api', retry: { count: 1, timer: '10ms' } },
          { name: 'two', call: 'echo' },
        ],
      },
      {},
      [{ service: 'echo', NAME: 'echo' }],
    ));
    await scriptedTarget(node, 'api', [503, 200]);
    const r = await startRun(node, {}, { traceparent: [`00-${TRACE}-b7ad6b7169203331-01`] });
    expect(r.Code, r.Message).to.equal(200);
    const spans = (): ReturnType<typeof fromReadable> => fromReadable(exporter.getFinishedSpans());
    await until(
      () => spans().filter((s) => s.name === 'flow step').length === 3 && spans().some((s) => s.service === 'echo'),
    );
    const steps = spans().filter((s) => s.name === 'flow step');
    expect(steps.map((s) => [s.attributes['hivenode.flow.step'], s.attributes['hivenode.code']])).to.deep.equal([
      ['one', 503],
      ['one', 200],
      ['two', 200],
    ]);
    for (const s of spans()) expect(s.traceId, s.name).to.equal(TRACE);
    const started = spans().find((s) => s.service === 'flow' && s.name !== 'flow step')!;
    for (const s of steps) expect(s.parentSpanId).to.equal(started.spanId);
    const echo = spans().find((s) => s.service === 'echo')!;
    expect(echo.parentSpanId).to.equal(steps[2]!.spanId);
  });
});
