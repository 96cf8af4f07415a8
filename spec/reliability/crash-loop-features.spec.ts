/**
 * Crash loops with the queue's operations on: the same kill loop as crash-loop.spec.ts, on a queue
 * that deduplicates every enqueue (idempotency-key), delays some entries (delay), debounces others
 * (debounce, dedup_mode replace), gives every entry a priority, limits its groups (GroupBy,
 * GroupConcurrency) in strict order with weighted fairness (GroupOrder, Fairness, GroupWeights) and
 * fires a cron schedule every second; a second loop runs the same with batches (BatchSize 20,
 * BatchWindow 20ms: GroupOrder is refused beside batches, so its groups keep GroupConcurrency 1 and
 * weighted fairness) and a Breaker that the healthy target never opens. Every acknowledged entry must
 * be delivered in the end; a repeated idempotency key, sent again after kills, must answer with its
 * first entry's key and create nothing; the schedule must survive the kills and keep firing.
 * Scaled: 5 kills × 1,000 entries; full (HIVENODE_CHAOS=full): 20 kills × 5,000 entries.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { prng } from '../prng.js';
import { recorded, tempDir } from '../integration/queue/helpers.js';
import { awaitDrain, enqueueAll, expectNoneMissing, killWhileDelivering } from './kill-loop.js';
import type { NodeProcess } from './node-process.js';
import { startNodeProcess, writeNodeFile } from './node-process.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';
import { sleep } from '../support/wait.js';

const ENTRIES = byScale(1_000, 5_000);
const KILLS = byScale(5, 20);
const GROUPS = 8;
const SEED = 0xfeed;

interface Answer {
  Code: number;
  Data: Record<string, string[]>;
}

/** The queue's settings of each loop: strict order per group, or batches (which GroupOrder is refused beside). */
const LOOPS = [
  {
    title: '',
    load: 'GroupConcurrency 1, GroupOrder strict, Fairness weighted',
    queue: 'GroupOrder: strict',
    delay: '5ms',
  },
  // batches deliver the whole load in well under the kill's 150 ms unless each takes a while: the target answers a batch in 50 ms
  {
    title: ' in batches',
    load: 'GroupConcurrency 1, Fairness weighted, BatchSize 20, BatchWindow 20ms, Breaker; the target takes 50 ms a message',
    queue: 'BatchSize: 20, BatchWindow: 20ms, Breaker: "errors>50%/30s,min=20"',
    delay: '50ms',
  },
] as const;

describe('reliability: crash loops with dedup, delays, group limits and a schedule', function () {
  let node: NodeProcess | undefined;
  after(async () => {
    await node?.kill();
  });

  for (const loop of LOOPS)
    reliabilityTest(
      `${KILLS} SIGKILLs during delivery of ${ENTRIES} deduplicated, grouped entries${loop.title} and a schedule: nothing acknowledged is lost, no repeated key makes an entry`,
      {
        suite: 'crash loops',
        load: `${ENTRIES} entries with an idempotency-key and a priority each (every 10th delayed 1 s, every 7th debounced 500 ms) in ${GROUPS} groups (${loop.load}) through the gateway, a schedule firing every second, repeated keys sent after kills`,
        faults: `${KILLS} × SIGKILL of the node at a random point 150–400 ms into delivery, restart on the same store`,
      },
      byScale(240_000, 1_500_000),
      async (figures) => {
        const rnd = prng(SEED);
        const dir = tempDir('hn-crash-ops-');
        const record = join(dir, 'delivered.jsonl');
        const file = writeNodeFile(dir, 'node', [
          `{service: echo, NAME: target, Delay: ${loop.delay}, RecordFile: "${record}"}`,
          `{service: queue, NAME: q, PersistPath: "${join(dir, 'store')}", DefaultChannel: target, DeliveryConcurrency: 4, StartPaused: true, GroupBy: g, GroupConcurrency: 1, ${loop.queue}, Fairness: weighted, GroupWeights: "0=3;*=1"}`,
          '{service: gateway, NAME: gw, Port: 0, Strict: true, OUTPUTCHANNEL: q, ControlAllowList: "command,idempotency-key,delay,debounce,priority,schedule_name,cron,overlap"}',
        ]);
        node = await startNodeProcess(file);
        const post = async (
          port: number,
          headers: Record<string, string>,
          data: Record<string, string[]>,
        ): Promise<Answer> => {
          const res = await fetch(`http://127.0.0.1:${port}/queue/action`, {
            method: 'POST',
            headers,
            body: JSON.stringify(data),
          });
          return (await res.json()) as Answer;
        };
        const scheduled = await post(
          node.port,
          { command: 'schedule', schedule_name: 'tick', cron: '* * * * * *', overlap: 'allow' },
          { tick: ['yes'] },
        );
        expect(scheduled.Code, JSON.stringify(scheduled)).to.equal(200);

        // an entry counts only once its 200 (stored and fsynced) answer came back
        const firstKey = new Map<string, string>();
        // every 10th delayed, every 7th (not delayed) debounced: its key is its own, so it is never replaced, only held 500 ms
        const debounced = (n: number): boolean => n % 7 === 3 && n % 10 !== 0;
        const enqueue = (n: number) => ({
          headers: {
            'idempotency-key': `entry-${n}`,
            priority: String(n % 10),
            ...(n % 10 === 0 ? { delay: '1s' } : {}),
            ...(debounced(n) ? { debounce: '500ms' } : {}),
          },
          data: { i: [String(n)], g: [String(n % GROUPS)] },
        });
        // a new entry answers its key in `keys`, a duplicate (none here: every key is new) in `key`
        await enqueueAll<Answer>(node.port, ENTRIES, enqueue, (n, answer) =>
          firstKey.set(String(n), (answer.Data.keys ?? answer.Data.key)![0]!),
        );
        figures['entries acknowledged'] = firstKey.size;
        expect(firstKey.size).to.equal(ENTRIES);

        const delivered = (): string[] => recorded(record).flatMap((r) => r.message.Data.i ?? []);
        const resume = async (port: number): Promise<void> => {
          expect((await post(port, { command: 'resume' }, {})).Code).to.equal(200);
        };
        /** Sends a few acknowledged keys again: each must be answered as a duplicate with its first entry's key. */
        let repeats = 0;
        const repeat = async (port: number): Promise<void> => {
          for (let r = 0; r < 10; r++) {
            let n = Math.floor(rnd() * ENTRIES);
            // a debounced key is in replace mode: a repeat would replace or add, not answer a duplicate
            if (debounced(n)) n = (n + 1) % ENTRIES;
            const i = String(n);
            const answer = await post(port, { 'idempotency-key': `entry-${i}` }, { i: [i], g: ['0'] });
            expect(answer.Code).to.equal(200);
            expect(answer.Data.duplicate, `repeated key entry-${i}`).to.deep.equal(['true']);
            expect(answer.Data.key).to.deep.equal([firstKey.get(i)]);
            repeats++;
          }
        };
        node = await killWhileDelivering(
          node,
          {
            file,
            kills: KILLS,
            entries: ENTRIES,
            rnd,
            delivered,
            resume,
            beforeResume: repeat,
            started: (n) => (node = n),
          },
          figures,
        );
        figures['repeated keys answered as duplicates'] = repeats;
        await awaitDrain(delivered, firstKey.size, figures);
        // the schedule outlived every kill: it is still listed and still fires
        const ticksBefore = recorded(record).filter((r) => r.message.Data.tick).length;
        const listed = await post(node.port, { command: 'schedules' }, {});
        expect(JSON.stringify(listed.Data)).to.include('tick');
        await sleep(2_500);
        const ticks = recorded(record).filter((r) => r.message.Data.tick).length;
        figures['schedule firings delivered'] = ticks;
        expect(ticks, 'the schedule fires after the last restart').to.be.greaterThan(ticksBefore);
        await node.kill('SIGTERM');
        node = undefined;

        expectNoneMissing(delivered(), firstKey.keys(), figures);
        if (loop.queue.includes('BatchSize')) {
          const batches = recorded(record).filter((r) => (r.message.Data.i?.length ?? 0) > 1).length;
          figures['batches of more than one entry delivered'] = batches;
          expect(batches, 'entries went in batches').to.be.greaterThan(0);
        }
      },
    );
});
