import { expect } from 'chai';
import { join } from 'node:path';
import type { HiveNode } from '../../node/node.js';
import { DEFAULT_TRACING } from '../../config/tracing.js';
import { startTracing, stopTracing } from '../../actors/observe/tracing.js';
import { parseTraceparent } from '../../actors/observe/trace-context.js';
import { tempDir } from '../temp.js';
import { startTestNode } from './helpers.js';
import { until } from '../support/wait.js';

/** The queue's own lines about an entry (its retry, its end, its dead-letter hand-over) carry the entry's trace_id. */
describe('tracing: the queue logs about an entry in its trace', function () {
  this.timeout(20_000);
  let node: HiveNode | undefined;
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
    await stopTracing();
  });

  const run = async (
    deadLetter: string,
  ): Promise<{ traceId: string; lines: Array<{ message: string; trace_id?: string }> }> => {
    await startTracing(DEFAULT_TRACING);
    const started = await startTestNode([
      {
        service: 'gateway',
        NAME: 'gw',
        Port: 0,
        Strict: true,
        OUTPUTCHANNEL: 'jobs',
        ControlAllowList: 'channel,requeue_timer,requeue_count,deadletter_slap',
      },
      {
        service: 'queue',
        NAME: 'jobs',
        AllowedChannels: 'failing,dead',
        PersistPath: join(tempDir('hn-trace-queue-'), 'store'),
        LOGLEVEL: 'debug',
        LOGFORMAT: 'JSON',
      },
      { service: 'echo', NAME: 'failing', ReplyCode: 502 },
      { service: 'echo', NAME: 'dead' },
    ]);
    node = started.node;
    const port = node.services.find((s) => s.name === 'gw')!.running.status().port as number;
    const control = {
      channel: ['failing'],
      requeue_timer: ['0'],
      requeue_count: ['1'],
      ...(deadLetter ? { deadletter_slap: [deadLetter] } : {}),
    };
    const res = await fetch(`http://127.0.0.1:${port}/jobs/add`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Data: { n: ['1'] }, Control: control }),
    });
    expect(res.status).to.equal(200);
    const traceId = parseTraceparent(res.headers.get('traceparent') ?? '')!.traceId;
    const ended = deadLetter ? 'dead-lettered to' : 'kept in the dead set after';
    const lines = (): Array<{ message: string; trace_id?: string }> =>
      started
        .logs()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { message: string; trace_id?: string });
    await until(() => lines().some((l) => l.message.includes(ended)), 10_000);
    return { traceId, lines: lines().filter((l) => l.message.startsWith('entry ')) };
  };

  it('a failed attempt retried, then kept dead: both lines carry the trace_id the gateway answered', async () => {
    const { traceId, lines } = await run('');
    const retry = lines.filter((l) => l.message.includes('retrying at'));
    const dropped = lines.filter((l) => l.message.includes('kept in the dead set after 2 attempt(s)'));
    expect(retry, JSON.stringify(lines)).to.have.length(1);
    expect(retry[0]!.message).to.contain('failed (502');
    expect(dropped, JSON.stringify(lines)).to.have.length(1);
    expect([retry[0]!.trace_id, dropped[0]!.trace_id]).to.deep.equal([traceId, traceId]);
  });

  it('dead-lettered: the hand-over line carries the trace_id', async () => {
    const { traceId, lines } = await run('dead');
    const handed = lines.filter((l) => l.message.includes(`dead-lettered to 'dead'`));
    expect(handed, JSON.stringify(lines)).to.have.length(1);
    expect(handed[0]!.trace_id).to.equal(traceId);
  });
});
