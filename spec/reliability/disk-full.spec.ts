/**
 * A full disk under the queue — a real one: the queue's PersistPath is a 2 MiB tmpfs mounted for the
 * test (we run as root, here and in CI; without mount rights the test is skipped and says why).
 * Entries are enqueued until the file system is full. Expected: enqueues are refused with 507 and a
 * message saying the store is full; after space returns (the tmpfs is remounted larger) enqueues
 * succeed again without a restart, and after a restart on the same store every acknowledged entry
 * is still there and is delivered.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { HiveNode } from '../../node/node.js';
import { startTestNode } from '../integration/helpers.js';
import { queueCall, recorded, tempDir } from '../integration/queue/helpers.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';
import { until } from '../support/wait.js';

const TMPFS_SIZE = '2m';
/** Bounds the fill loop: 2 MiB holds far fewer entries of PAYLOAD bytes than this. */
const MAX_ATTEMPTS = 5_000;
const PAYLOAD = 'x'.repeat(2_000);
const REFUSALS_WANTED = byScale(20, 200);
const AFTER_SPACE_RETURNS = byScale(20, 200);

describe('reliability: a full disk under the queue (tmpfs)', function () {
  let node: HiveNode | undefined;
  let mounted: string | undefined;
  after(async () => {
    await node?.stop(2000);
    if (mounted) spawnSync('umount', ['-l', mounted]);
  });

  reliabilityTest(
    'enqueues on a full file system are refused with 507; every acknowledged entry survives and is delivered once space returns',
    {
      suite: 'dependencies',
      load: `entries of ${PAYLOAD.length} bytes enqueued one after another until the disk is full, then ${REFUSALS_WANTED} more`,
      faults: `queue store on a ${TMPFS_SIZE} tmpfs that fills up; space returns by remounting it at 64 MiB`,
    },
    byScale(60_000, 180_000),
    async (figures, skip) => {
      const dir = tempDir('hn-diskfull-');
      const store = join(dir, 'store');
      mkdirSync(store);
      const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_SIZE}`, 'tmpfs', store], {
        encoding: 'utf8',
      });
      if (mount.status !== 0)
        skip(
          `cannot mount a tmpfs here (${(mount.stderr || mount.error?.message || '').trim()}): needs root or CAP_SYS_ADMIN`,
        );
      mounted = store;
      const record = join(dir, 'delivered.jsonl');
      const services: Parameters<typeof startTestNode>[0] = [
        { service: 'echo', NAME: 'target', RecordFile: record },
        { service: 'queue', NAME: 'q', PersistPath: store, DefaultChannel: 'target', StartPaused: true },
      ];
      ({ node } = await startTestNode(services));

      const acknowledged = new Set<string>();
      const refusals: string[] = [];
      const otherCodes: number[] = [];
      let attempts = 0;
      const enqueue = async (i: number): Promise<number> => {
        const r = await queueCall(node!, {}, { i: [String(i)], pad: [PAYLOAD] }, 'q');
        if (r.Code === 200) acknowledged.add(String(i));
        else if (r.Code === 507) refusals.push(r.Message);
        else otherCodes.push(r.Code);
        return r.Code;
      };
      while (refusals.length < REFUSALS_WANTED && attempts < MAX_ATTEMPTS) await enqueue(attempts++);
      const acknowledgedWhenFull = acknowledged.size;
      figures['acknowledged before the disk was full'] = acknowledgedWhenFull;
      figures['refused with 507'] = refusals.length;
      figures['other answers'] = otherCodes.join(' ') || 'none';
      figures['507 message'] = refusals[0] ?? '';
      expect(refusals.length, '507 answers once the disk is full').to.equal(REFUSALS_WANTED);
      expect(otherCodes, 'answers other than 200 and 507').to.deep.equal([]);
      expect(refusals[0]).to.match(/full/i);

      // space returns: the same mount, larger; the running queue must take entries again
      const remount = spawnSync('mount', ['-o', 'remount,size=64m', store], { encoding: 'utf8' });
      expect(remount.status, remount.stderr).to.equal(0);
      const codesAfter: number[] = [];
      for (let k = 0; k < AFTER_SPACE_RETURNS; k++) codesAfter.push(await enqueue(attempts++));
      figures['enqueues after space returned'] =
        `${codesAfter.filter((c) => c === 200).length} of ${AFTER_SPACE_RETURNS} acknowledged`;
      expect(
        codesAfter.every((c) => c === 200),
        'enqueues after space returned',
      ).to.equal(true);

      // a restart proves what was acknowledged is on the disk, not just in memory
      await node.stop(2000);
      ({ node } = await startTestNode(services));
      const size = Number((await queueCall(node, { command: ['status'] }, {}, 'q')).Data.queuesize?.[0]);
      figures['entries in the store after a restart'] = size;
      expect(size, 'entries in the store after a restart').to.equal(acknowledged.size);
      expect((await queueCall(node, { command: ['resume'] }, {}, 'q')).Code).to.equal(200);
      const delivered = (): Set<string> => new Set(recorded(record).map((r) => r.message.Data.i![0]!));
      await until(() => delivered().size >= acknowledged.size, 60_000).catch(() => undefined);
      const seen = delivered();
      const missing = [...acknowledged].filter((i) => !seen.has(i));
      figures['acknowledged / delivered / missing'] = `${acknowledged.size} / ${seen.size} / ${missing.length}`;
      expect(missing, 'acknowledged entries not delivered').to.deep.equal([]);
    },
  );
});
