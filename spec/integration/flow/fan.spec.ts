/**
 * map and parallel steps (README, Flows): one sub-step per element (a JSON array or lines rendered
 * from the run) with a concurrency limit and the Results kept in order; named branches sent at once
 * and joined, each kept under its name; elements kept across a restart are not sent again.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import { recorded } from '../queue/helpers.js';
import { flowCommand, flowDir, flowNode, recordingEcho, scriptedTarget, startRun, stopFlowNodes } from './helpers.js';
import { sleep, until } from '../../support/wait.js';

describe('flow map and parallel', function () {
  this.timeout(30_000);
  let node: HiveNode;
  let dir: string;
  beforeEach(() => (dir = flowDir()));
  afterEach(stopFlowNodes);

  it('map sends one sub-step per line at most concurrency at once; Results kept in order; keys <run>:<step>:<index>', async () => {
    const def = {
      steps: [
        {
          name: 'each',
          map: {
            items: '{{range .Input.Data.ids}}{{.}}\n{{end}}',
            concurrency: 2,
            call: 'work',
            data: { id: '{{.Item}}', index: '{{.Index}}' },
          },
        },
        {
          name: 'sum',
          call: 'db',
          data: {
            count: '{{len .Steps.each.List}}',
            third: '{{with index .Steps.each.List 2}}{{index .Data.id 0}}{{end}}',
          },
        },
      ],
    };
    ({ node } = await flowNode(dir, def, {}, [recordingEcho(dir, 'db')]));
    let active = 0;
    let most = 0;
    const order: string[] = [];
    await node.hive.listen('work', (d) => {
      d.ack();
      active++;
      most = Math.max(most, active);
      const id = d.message.Data.id![0]!;
      // later elements answer sooner: the kept order is the elements' order, not the answers'
      setTimeout(
        () => {
          active--;
          order.push(id);
          d.respond({
            Code: 200,
            Message: 'Success',
            Data: mapOf({ id: [id], key: d.message.Control['idempotency-key']! }),
            List: [],
          });
        },
        120 - Number(d.message.Data.index![0]) * 20,
      );
    });
    const r = await startRun(node, { ids: ['a', 'b', 'c', 'd', 'e'] });
    expect(r.Code, r.Message).to.equal(200);
    expect(r.Data).to.deep.equal({ count: ['5'], third: ['c'] });
    expect(most).to.equal(2);
    const run = (await flowCommand(node, 'list')).Data.objects![0]!;
    const doc = (await flowCommand(node, 'fetch', { key: [run] })).List![0] as {
      steps: { each: { List: Array<{ Data: { id: string[]; key: string[] } }> } };
    };
    expect(doc.steps.each.List.map((x) => x.Data.id[0])).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
    expect(doc.steps.each.List.map((x) => x.Data.key[0])).to.deep.equal([0, 1, 2, 3, 4].map((i) => `${run}:each:${i}`));
  });

  it('map over a JSON array gives each element as .Item; an element failing for good fails the step, caught', async () => {
    const def = {
      steps: [
        {
          name: 'rows',
          map: {
            items: '{{index .Input.Data.rows 0}}',
            call: 'api',
            data: { name: '{{.Item.name}}' },
            retry: { count: 1, timer: '10ms' },
          },
          catch: { codes: [503], next: 'report' },
        },
        { name: 'ok', succeed: {} },
        { name: 'report', fail: { code: '422', message: '{{.Steps.rows.Message}}' } },
      ],
    };
    ({ node } = await flowNode(dir, def));
    const got = await scriptedTarget(node, 'api', [200, 503, 503]);
    const r = await startRun(node, { rows: [JSON.stringify([{ name: 'x' }, { name: 'y' }])] });
    expect(r.Code).to.equal(422);
    expect(r.Message).to.equal("step 'rows' element 1: scripted 503");
    expect(got.map((g) => g.message.Data.name![0])).to.deep.equal(['x', 'y', 'y']);
    const bad = await startRun(node, { rows: ['[not json'] });
    expect(bad.Code).to.equal(400);
    expect(bad.Message).to.contain('not a JSON array');
  });

  it('parallel sends its branches at once and keeps each under its name', async () => {
    const def = {
      steps: [
        {
          name: 'both',
          parallel: {
            stock: { call: 'slow', data: { what: 'stock' } },
            price: { call: 'slow', data: { what: 'price' } },
          },
        },
        {
          name: 'join',
          call: 'db',
          data: {
            got: ['{{index .Steps.stock.Data.what 0}}', '{{index .Steps.price.Data.what 0}}'],
            n: '{{len .Steps.both.List}}',
          },
        },
      ],
    };
    ({ node } = await flowNode(dir, def, {}, [
      recordingEcho(dir, 'db'),
      { service: 'echo', NAME: 'slow', Delay: 300 },
    ]));
    const t0 = Date.now();
    const r = await startRun(node);
    expect(r.Code, r.Message).to.equal(200);
    expect(Date.now() - t0, 'both branches at once, not one after the other').to.be.below(550);
    expect(r.Data).to.deep.equal({ got: ['stock', 'price'], n: ['2'] });
  });

  it('a map stopped midway goes on after the restart without sending the elements already kept', async () => {
    const def = {
      steps: [
        {
          name: 'each',
          map: {
            items: '{{range .Input.Data.ids}}{{.}}\n{{end}}',
            concurrency: 1,
            call: 'work',
            data: { id: '{{.Item}}' },
          },
        },
      ],
    };
    ({ node } = await flowNode(dir, def, {}, [recordingEcho(dir, 'work', { Delay: 250 })]));
    const key = (await node.hive.execute('flow', makeMessage({ Data: mapOf({ ids: ['1', '2', '3', '4'] }) }), 5000))
      .Data.key!;
    await until(() => recorded(join(dir, 'work.jsonl')).length === 2);
    await node.stop(50);
    ({ node } = await flowNode(dir, def, {}, [recordingEcho(dir, 'work')]));
    await until(() => recorded(join(dir, 'work.jsonl')).length >= 4, 5000);
    await sleep(200);
    const ids = recorded(join(dir, 'work.jsonl')).map((r) => r.message.Data.id![0]);
    expect(ids.filter((i) => i === '1')).to.have.length(1);
    expect(new Set(ids)).to.deep.equal(new Set(['1', '2', '3', '4']));
    expect((await flowCommand(node, 'fetch', { key })).Data.state).to.deep.equal(['succeeded']);
  });
});
