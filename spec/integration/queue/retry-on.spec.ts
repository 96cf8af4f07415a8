import { expect } from 'chai';
import { join } from 'node:path';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../helpers.js';
import { queueCall, recorded, tempDir } from './helpers.js';
import { sleep, until } from '../../support/wait.js';

describe('queue RetryOn: which failed deliveries are retried', function () {
  this.timeout(20_000);
  let node: HiveNode | undefined;
  let dir: string;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  /** A queue delivering to an echo target answering `replyCode`, dead letters recorded in dlq.jsonl. */
  // DeadRetention 0: an entry without a dead-letter target is dropped, as these tests check (else it is kept in the dead set)
  const start = async (replyCode: number, retryOn?: string): Promise<{ node: HiveNode; logs: () => string }> => {
    const started = await startTestNode([
      { service: 'echo', NAME: 'target', ReplyCode: replyCode, RecordFile: join(dir, 'target.jsonl') },
      { service: 'echo', NAME: 'dlq', RecordFile: join(dir, 'dlq.jsonl') },
      {
        service: 'queue',
        NAME: 'queue',
        AllowedChannels: '*',
        PersistPath: join(dir, 'store'),
        DeadRetention: '0',
        ...(retryOn === undefined ? {} : { RetryOn: retryOn }),
      },
    ]);
    node = started.node;
    return started;
  };
  const enqueue = (n: HiveNode, control: Record<string, string[]> = {}) =>
    queueCall(
      n,
      { channel: ['target'], requeue_timer: ['0'], requeue_count: ['2'], deadletter_slap: ['dlq'], ...control },
      { item: ['x'] },
    );
  const attempts = (): number => recorded(join(dir, 'target.jsonl')).length;
  const deadLetters = () => recorded(join(dir, 'dlq.jsonl'));

  it('retryable: a final answer (400) is dead-lettered after its one attempt, saying why', async () => {
    const { node: n } = await start(400, 'retryable');
    await enqueue(n);
    await until(() => deadLetters().length === 1, 10_000);
    // a retry would follow at once (requeue_timer 0): give it the time to show up if it were made
    await sleep(300);
    expect(attempts()).to.equal(1);
    const dead = deadLetters()[0]!;
    expect(dead.message.Control.attempts).to.deep.equal(['1']);
    expect(dead.message.Control.deadletter_reason![0]).to.match(/not retryable/);
    expect(dead.message.Control.last_error![0]).to.match(/^400 /);
  });

  it('retryable: a final answer without a dead-letter target is dropped after one attempt and logged', async () => {
    const { node: n, logs } = await start(404, 'RETRYABLE');
    await queueCall(n, { channel: ['target'], requeue_timer: ['0'], requeue_count: ['2'] }, { item: ['x'] });
    await until(() => (n.services.find((s) => s.kind === 'queue')!.running.status().dropped as number) === 1);
    expect(attempts()).to.equal(1);
    expect(logs()).to.match(/dropped after 1 attempt\(s\), not retryable: 404 /);
  });

  it('retryable: a retryable answer (503) is retried as before, then dead-lettered when attempts run out', async () => {
    const { node: n } = await start(503, 'retryable');
    await enqueue(n);
    await until(() => deadLetters().length === 1, 10_000);
    expect(attempts()).to.equal(3);
    const dead = deadLetters()[0]!;
    expect(dead.message.Control.deadletter_reason).to.deep.equal(['no success after 3 attempt(s)']);
    expect(dead.message.Control.last_error![0]).to.match(/^503 /);
  });

  it('any (the default): a 400 is retried like every other failure (the spec)', async () => {
    const { node: n } = await start(400);
    await enqueue(n);
    await until(() => deadLetters().length === 1, 10_000);
    expect(attempts()).to.equal(3);
    expect(deadLetters()[0]!.message.Control.deadletter_reason).to.deep.equal(['no success after 3 attempt(s)']);
  });

  it('refuses a RetryOn value it does not know at start', async () => {
    const err = await start(200, 'sometimes').catch((e: unknown) => e);
    expect((err as Error).message).to.match(/RetryOn .*'sometimes' is not accepted; expected one of any, retryable/);
  });
});
