/**
 * A step's retry (count, timer, backoff, on Codes), timeout and catch (README, Flows): a compensation
 * runs when a step fails for good, and the run ends as its compensation says.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import { recorded } from '../queue/helpers.js';
import { flowCommand, flowDir, stopFlowNodes, flowNode, recordingEcho, scriptedTarget, startRun } from './helpers.js';

describe('flow retry, timeout and catch', function () {
  this.timeout(30_000);
  let node: HiveNode;
  let dir: string;
  beforeEach(() => (dir = flowDir()));
  afterEach(stopFlowNodes);

  it('retries a retryable Code count times with the fixed timer, then goes on; every attempt is in fetch', async () => {
    ({ node } = await flowNode(
      dir,
      {
        steps: [
          { name: 'api', call: 'api', retry: { count: 3, timer: '100ms' } },
          { name: 'after', call: 'db' },
        ],
      },
      {},
      [recordingEcho(dir, 'db')],
    ));
    const got = await scriptedTarget(node, 'api', [503, 502, 200]);
    const r = await startRun(node);
    expect(r.Code, r.Message).to.equal(200);
    expect(got).to.have.length(3);
    for (let i = 1; i < got.length; i++) expect(got[i]!.at - got[i - 1]!.at).to.be.within(90, 1000);
    // one idempotency key for every attempt of one visit: a target drops repeats
    expect(new Set(got.map((g) => g.message.Control['idempotency-key']![0])).size).to.equal(1);
    const list = await flowCommand(node, 'list', { state: ['succeeded'] });
    const fetched = await flowCommand(node, 'fetch', { key: list.Data.objects! });
    const doc = fetched.List![0] as { attempts: Array<{ step: string; attempt: number; code: number }> };
    expect(doc.attempts.map((a) => [a.step, a.attempt, a.code])).to.deep.equal([
      ['api', 1, 503],
      ['api', 2, 502],
      ['api', 3, 200],
      ['after', 1, 200],
    ]);
  });

  it('exponential backoff doubles the wait (with jitter); a Code not in on is not retried', async () => {
    ({ node } = await flowNode(dir, {
      steps: [{ name: 'api', call: 'api', retry: { count: 3, timer: '100ms', backoff: 'exponential', on: [503] } }],
    }));
    const got = await scriptedTarget(node, 'api', [503, 503, 503, 200]);
    expect((await startRun(node)).Code).to.equal(200);
    const gaps = got.slice(1).map((g, i) => g.at - got[i]!.at);
    expect(gaps[0]).to.be.within(75, 1000);
    expect(gaps[1]).to.be.within(155, 1500);
    expect(gaps[2]).to.be.within(315, 2500);
    const other = await scriptedTarget(node, 'api2', [500]);
    await node.stop(2000);
    ({ node } = await flowNode(flowDir(), {
      steps: [{ name: 'api', call: 'api2', retry: { count: 3, timer: '50ms', on: [503] } }],
    }));
    const got2 = await scriptedTarget(node, 'api2', [500]);
    const r = await startRun(node);
    expect(r.Code).to.equal(500);
    expect(got2).to.have.length(1);
    expect(other).to.have.length(0);
  });

  it('the default retry Codes are 429, 500, 502, 503, 504: a 400 fails the run at once', async () => {
    ({ node } = await flowNode(dir, { steps: [{ name: 'api', call: 'api', retry: { count: 2, timer: '50ms' } }] }));
    const got = await scriptedTarget(node, 'api', [429, 400]);
    const r = await startRun(node);
    expect(r.Code).to.equal(400);
    expect(got).to.have.length(2);
    const failed = await flowCommand(node, 'list', { state: ['failed'], step: ['api'] });
    expect(failed.Data.objects).to.have.length(1);
  });

  it("a step's timeout (else DefaultTimeout) answers 504, which is retried", async () => {
    ({ node } = await flowNode(
      dir,
      { steps: [{ name: 'slow', call: 'slow', timeout: '100ms', retry: { count: 1, timer: '10ms' } }] },
      { DefaultTimeout: '10s' },
      [{ service: 'echo', NAME: 'slow', Delay: 400 }],
    ));
    const t0 = Date.now();
    const r = await startRun(node);
    expect(r.Code).to.equal(504);
    expect(Date.now() - t0).to.be.below(1500);
    const doc = (await flowCommand(node, 'fetch', { key: (await flowCommand(node, 'list')).Data.objects! }))
      .List![0] as { attempts: unknown[] };
    expect(doc.attempts).to.have.length(2);
  });

  it('catch sends a failure to a compensation that sees the failed step; the run ends as the compensation says', async () => {
    const def = {
      steps: [
        { name: 'insert', call: 'db', data: { op: 'insert', id: '{{index .Input.Data.id 0}}' } },
        { name: 'ship', call: 'api', retry: { count: 1, timer: '10ms' }, catch: [{ codes: [502, 503], next: 'undo' }] },
        { name: 'log', emit: 'audit', end: true },
        {
          name: 'undo',
          call: 'db',
          data: {
            op: 'delete',
            id: '{{index .Steps.insert.Data.id 0}}',
            because: '{{.Steps.ship.Code}} {{.Steps.ship.Message}}',
          },
        },
        {
          name: 'failed',
          fail: {
            code: '{{.Steps.ship.Code}}',
            message: 'shipping failed: {{.Steps.ship.Message}}; order {{index .Input.Data.id 0}} undone',
          },
        },
      ],
    };
    ({ node } = await flowNode(dir, def, {}, [recordingEcho(dir, 'db'), recordingEcho(dir, 'audit')]));
    await scriptedTarget(node, 'api', [502]);
    const r = await startRun(node, { id: ['o-7'] });
    expect(r.Code).to.equal(502);
    expect(r.Message).to.equal('shipping failed: scripted 502; order o-7 undone');
    expect(recorded(join(dir, 'db.jsonl')).map((d) => d.message.Data)).to.deep.equal([
      { op: ['insert'], id: ['o-7'] },
      { op: ['delete'], id: ['o-7'], because: ['502 scripted 502'] },
    ]);
    expect(recorded(join(dir, 'audit.jsonl'))).to.have.length(0);
    // a Code the catch does not name fails the run at the step, without compensation
    await node.stop(2000);
    dir = flowDir();
    ({ node } = await flowNode(dir, def, {}, [recordingEcho(dir, 'db'), recordingEcho(dir, 'audit')]));
    await scriptedTarget(node, 'api', [404]);
    const r2 = await startRun(node, { id: ['o-8'] });
    expect(r2.Code).to.equal(404);
    expect(recorded(join(dir, 'db.jsonl'))).to.have.length(1);
  });
});
