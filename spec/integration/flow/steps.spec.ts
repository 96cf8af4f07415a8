/**
 * The flow's step kinds on the embedded hive (README, Flows): call, execute and emit with templates
 * over .Input and .Steps, choice, succeed, fail, a step's result, the flow's result, and
 * AllowedChannels bounding a channel rendered from the Input.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import { recorded } from '../queue/helpers.js';
import { flowCommand, flowDir, stopFlowNodes, flowNode, recordingEcho, startRun } from './helpers.js';
import { until } from '../../support/wait.js';

describe('flow step kinds', function () {
  this.timeout(30_000);
  let node: HiveNode;
  let dir: string;
  beforeEach(() => (dir = flowDir()));
  afterEach(stopFlowNodes);

  it('call, execute and emit render data, control, class and operation from .Input and .Steps; a call answers the last Result', async () => {
    ({ node } = await flowNode(
      dir,
      {
        steps: [
          {
            name: 'insert',
            call: 'db',
            class: '{{.Input.Class}}',
            operation: 'insert',
            data: { item: '{{index .Input.Data.item 0}}', tags: ['a', '{{index .Input.Data.item 0}}-b'] },
            control: { who: 'flow' },
          },
          {
            name: 'notify',
            execute: 'mail',
            data: { about: '{{index .Steps.insert.Data.item 0}}', code: '{{.Steps.insert.Code}}' },
          },
          { name: 'log', emit: 'audit', data: { line: 'done {{index .Input.Data.item 0}}' } },
          { name: 'answer', call: 'db', data: { final: '{{index .Steps.insert.Data.tags 1}}' } },
        ],
      },
      {},
      [recordingEcho(dir, 'db'), recordingEcho(dir, 'mail'), recordingEcho(dir, 'audit')],
    ));
    const r = await startRun(node, { item: ['apple'] });
    expect(r.Code, r.Message).to.equal(200);
    expect(r.Data.final).to.deep.equal(['apple-b']);
    const db = recorded(join(dir, 'db.jsonl'));
    expect(db).to.have.length(2);
    expect(db[0]!.mode).to.equal('call');
    expect(db[0]!.message.Class).to.equal('order');
    expect(db[0]!.message.Operation).to.equal('insert');
    expect(db[0]!.message.Data).to.deep.equal({ item: ['apple'], tags: ['a', 'apple-b'] });
    expect(db[0]!.message.Control.who).to.deep.equal(['flow']);
    const mail = recorded(join(dir, 'mail.jsonl'));
    expect(mail[0]!.mode).to.equal('execute');
    expect(mail[0]!.message.Data).to.deep.equal({ about: ['apple'], code: ['200'] });
    await until(() => recorded(join(dir, 'audit.jsonl')).length === 1);
    expect(recorded(join(dir, 'audit.jsonl'))[0]!.mode).to.equal('emit');
  });

  it("every step's message carries idempotency-key <run key>:<step>", async () => {
    ({ node } = await flowNode(
      dir,
      {
        steps: [
          { name: 'one', call: 'db' },
          { name: 'two', call: 'db' },
        ],
      },
      {},
      [recordingEcho(dir, 'db')],
    ));
    const r = await node.hive.execute(
      'flow',
      { Class: '', Operation: '', Control: Object.create(null), Data: Object.create(null) },
      5000,
    );
    expect(r.Code, r.Message).to.equal(200);
    const key = r.Data.key![0]!;
    await until(() => recorded(join(dir, 'db.jsonl')).length === 2);
    expect(recorded(join(dir, 'db.jsonl')).map((d) => d.message.Control['idempotency-key'])).to.deep.equal([
      [`${key}:one`],
      [`${key}:two`],
    ]);
  });

  it('choice goes to the first branch rendering true, else its default; succeed and fail end the run', async () => {
    ({ node } = await flowNode(
      dir,
      {
        steps: [
          {
            name: 'route',
            choice: [
              { when: '{{eq (index .Input.Data.kind 0) "big"}}', next: 'big' },
              { when: '{{eq (index .Input.Data.kind 0) "bad"}}', next: 'reject' },
            ],
            default: 'small',
          },
          { name: 'big', call: 'db', data: { size: 'big' }, next: 'done' },
          { name: 'small', call: 'db', data: { size: 'small' }, next: 'done' },
          { name: 'reject', fail: { code: '422', message: 'kind {{index .Input.Data.kind 0}} is refused' } },
          { name: 'done', succeed: {} },
        ],
      },
      {},
      [recordingEcho(dir, 'db')],
    ));
    expect((await startRun(node, { kind: ['big'] })).Data.size).to.deep.equal(['big']);
    expect((await startRun(node, { kind: ['tiny'] })).Data.size).to.deep.equal(['small']);
    const bad = await startRun(node, { kind: ['bad'] });
    expect(bad.Code).to.equal(422);
    expect(bad.Message).to.equal('kind bad is refused');
    const status = await flowCommand(node, 'status');
    expect(status.Data.succeeded).to.deep.equal(['2']);
    expect(status.Data.failed).to.deep.equal(['1']);
    expect(status.Data.queuesize).to.deep.equal(['0']);
  });

  it("a step's result shapes what it keeps (.Result in scope); the flow's result shapes the answer", async () => {
    ({ node } = await flowNode(
      dir,
      {
        steps: [
          {
            name: 'lookup',
            call: 'db',
            data: { id: '42', noise: 'x' },
            result: { order_id: '{{index .Result.Data.id 0}}' },
          },
          {
            name: 'ship',
            call: 'db',
            data: {
              kept: '{{index .Steps.lookup.Data.order_id 0}}',
              noise: '{{if .Steps.lookup.Data.noise}}leaked{{else}}dropped{{end}}',
            },
          },
        ],
        result: { order: '{{index .Steps.lookup.Data.order_id 0}}', shipped: '{{index .Steps.ship.Data.noise 0}}' },
      },
      {},
      [recordingEcho(dir, 'db')],
    ));
    const r = await startRun(node);
    expect(r.Code, r.Message).to.equal(200);
    expect(r.Data).to.deep.equal({ order: ['42'], shipped: ['dropped'] });
  });

  it('a channel rendered from the Input outside AllowedChannels fails the step with 403 naming it; * opens it', async () => {
    const def = { steps: [{ name: 'send', call: '{{index .Input.Data.to 0}}' }] };
    ({ node } = await flowNode(dir, def, {}, [recordingEcho(dir, 'db'), recordingEcho(dir, 'secret')]));
    const r = await startRun(node, { to: ['secret'] });
    expect(r.Code).to.equal(403);
    expect(r.Message).to.contain("channel 'secret'");
    expect(recorded(join(dir, 'secret.jsonl'))).to.have.length(0);
    await node.stop(2000);
    ({ node } = await flowNode(flowDir(), def, { AllowedChannels: 'db' }, [
      recordingEcho(dir, 'db'),
      recordingEcho(dir, 'secret'),
    ]));
    expect((await startRun(node, { to: ['db'] })).Code).to.equal(200);
    expect((await startRun(node, { to: ['secret'] })).Code).to.equal(403);
    await node.stop(2000);
    ({ node } = await flowNode(flowDir(), def, { AllowedChannels: '*' }, [
      recordingEcho(dir, 'db'),
      recordingEcho(dir, 'secret'),
    ]));
    expect((await startRun(node, { to: ['secret'] })).Code).to.equal(200);
  });

  it('a template failing at run time fails the run at that step with 400', async () => {
    ({ node } = await flowNode(
      dir,
      { steps: [{ name: 'bad', call: 'db', data: { x: '{{index .Input.Data.missing 3}}' } }] },
      {},
      [recordingEcho(dir, 'db')],
    ));
    const r = await startRun(node);
    expect(r.Code).to.equal(400);
    expect(r.Message).to.contain("step 'bad'");
  });
});
