/**
 * A damaged queue store is never silently replaced (README, Reliability; The queue: "A damaged
 * store"): `hivenode run` on a store whose pages are overwritten exits 2 with one line naming the file
 * and `hivenode queue salvage <dir>`, and leaves the file as it was; the salvage recovers every entry
 * of the undamaged pages into a new store, keeping the damaged file, and the queue restarted on it
 * delivers them to a real target. `StoreRecovery: salvage` does the same at the start by itself.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, readdirSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import { recorded } from '../integration/queue/helpers.js';
import { tempDir } from '../temp.js';
import { enqueueAll } from './kill-loop.js';
import type { NodeProcess } from './node-process.js';
import { runNodeToExit, startNodeProcess, writeNodeFile } from './node-process.js';
import type { Figures } from './record.js';
import { reliabilityTest } from './record.js';
import { HIVENODE_ARGS } from '../support/hivenode-bin.js';
import { sleep } from '../support/wait.js';

const ENTRIES = 300;
const PAGE = 4096;

/** The leaf pages of the entries table and how many rows each holds (SQLite's dbstat), read without writing to the file. */
function entryLeaves(file: string): Promise<Array<{ page: number; rows: number }>> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(`file:${file}?immutable=1`, sqlite3.OPEN_READONLY | sqlite3.OPEN_URI, (e) => {
      if (e) return reject(e);
      db.all(
        "SELECT pageno AS page, ncell AS rows FROM dbstat WHERE name = 'entries' AND pagetype = 'leaf' ORDER BY pageno",
        (err, rows) => db.close(() => (err ? reject(err) : resolve(rows as never))),
      );
    });
  });
}

interface DamagedQueue {
  dir: string;
  /** The queue's store directory, PersistPath/<NAME>. */
  storeDir: string;
  record: string;
  acknowledged: Set<string>;
  /** Entries on the overwritten pages: these cannot come back. */
  onDamagedPages: number;
  /** The damaged file's bytes. */
  bytes: Buffer;
}

/** The node's services: a recording echo as the queue's target, the queue (paused), a gateway in front. */
function nodeFile(dir: string, record: string, extra = ''): string {
  return writeNodeFile(dir, 'node', [
    `{service: echo, NAME: target, RecordFile: "${record}"}`,
    `{service: queue, NAME: q, PersistPath: "${join(dir, 'store')}", DefaultChannel: target, StartPaused: true${extra}}`,
    '{service: gateway, NAME: gw, Port: 0, Strict: true, OUTPUTCHANNEL: q, ControlAllowList: command}',
  ]);
}

/** 300 entries acknowledged through the gateway and the node stopped, then three leaf pages of the entries overwritten with noise. */
async function damagedQueue(figures: Figures, started: (n: NodeProcess | undefined) => void): Promise<DamagedQueue> {
  const dir = tempDir('hn-damaged-');
  const record = join(dir, 'delivered.jsonl');
  const node = await startNodeProcess(nodeFile(dir, record));
  started(node);
  const acknowledged = new Set<string>();
  await enqueueAll(
    node.port,
    ENTRIES,
    (n) => ({ data: { i: [String(n)], pad: ['p'.repeat(400)] } }),
    (n) => acknowledged.add(String(n)),
  );
  expect(acknowledged.size).to.equal(ENTRIES);
  await node.kill('SIGTERM');
  started(undefined);
  const storeDir = join(dir, 'store', 'q');
  const file = join(storeDir, 'queue.db');
  const leaves = await entryLeaves(file);
  expect(leaves.length, 'leaf pages of the entries').to.be.greaterThan(12);
  // three pages of the entries' b-tree, a quarter, a half and three quarters into it
  const hit = [
    leaves[Math.floor(leaves.length / 4)]!,
    leaves[Math.floor(leaves.length / 2)]!,
    leaves[Math.floor((3 * leaves.length) / 4)]!,
  ];
  const fd = openSync(file, 'r+');
  for (const { page } of hit) writeSync(fd, Buffer.alloc(PAGE, 0xa5), 0, PAGE, (page - 1) * PAGE);
  closeSync(fd);
  const onDamagedPages = hit.reduce((n, p) => n + p.rows, 0);
  figures['entries acknowledged'] = acknowledged.size;
  figures['pages overwritten (entries leaves)'] = hit.length;
  figures['entries on the overwritten pages'] = onDamagedPages;
  return { dir, storeDir, record, acknowledged, onDamagedPages, bytes: readFileSync(file) };
}

/** Resumes the queue and waits (bounded) until `expected` distinct entries were delivered; the distinct values delivered. */
async function deliver(port: number, record: string, expected: number): Promise<Set<string>> {
  const res = await fetch(`http://127.0.0.1:${port}/queue/action`, {
    method: 'POST',
    headers: { command: 'resume' },
    body: '{}',
  });
  expect(res.status).to.equal(200);
  const delivered = (): Set<string> => new Set(recorded(record).map((r) => r.message.Data.i![0]!));
  const deadline = Date.now() + 60_000;
  while (delivered().size < expected && Date.now() < deadline) await sleep(100);
  // a little longer: nothing beyond the recovered entries may come
  await sleep(300);
  return delivered();
}

/** Every delivered entry was acknowledged, and every entry not on a damaged page was delivered. */
function expectDelivered(q: DamagedQueue, delivered: Set<string>, figures: Figures): void {
  figures['delivered after the salvage'] = delivered.size;
  figures['lost (on the overwritten pages)'] = q.acknowledged.size - delivered.size;
  expect([...delivered].filter((i) => !q.acknowledged.has(i))).to.deep.equal([]);
  expect(delivered.size).to.equal(ENTRIES - q.onDamagedPages);
  expect(delivered.size).to.be.at.least(Math.ceil((2 * ENTRIES) / 3));
}

describe('a damaged queue store at the start of a node process', function () {
  this.timeout(60_000);
  let node: NodeProcess | undefined;
  afterEach(async () => {
    await node?.kill();
    node = undefined;
  });

  it('hivenode run exits 2 with one line naming the store file and the salvage command; the file is left untouched', async () => {
    const dir = tempDir('hn-damaged-');
    const storeDir = join(dir, 'store', 'queue');
    mkdirSync(storeDir, { recursive: true });
    // a valid SQLite header followed by pages of noise: opens, then fails its integrity check
    const bytes = Buffer.alloc(4096 * 8, 0xa5);
    Buffer.from('SQLite format 3\0').copy(bytes, 0);
    bytes.writeUInt16BE(4096, 16);
    writeFileSync(join(storeDir, 'queue.db'), bytes);
    const file = writeNodeFile(dir, 'node', [
      `{ service: queue, NAME: queue, PersistPath: ${JSON.stringify(join(dir, 'store'))} }`,
    ]);
    const { code, stderr } = await runNodeToExit(file);
    expect(code, stderr).to.equal(2);
    const lines = stderr.trim().split('\n');
    expect(lines, stderr).to.have.length(1);
    expect(lines[0])
      .to.contain(join(storeDir, 'queue.db'))
      .and.to.contain('damaged')
      .and.to.contain(`hivenode queue salvage ${storeDir}`);
    expect(readFileSync(join(storeDir, 'queue.db')).equals(bytes)).to.equal(true);
    expect(readdirSync(storeDir).filter((f) => f.includes('.corrupt-'))).to.deep.equal([]);
  });

  reliabilityTest(
    `a store of ${ENTRIES} entries with three damaged pages: the start refuses naming the salvage; hivenode queue salvage recovers the entries of the other pages and the queue delivers them`,
    {
      suite: 'dependencies',
      load: `${ENTRIES} entries enqueued through the gateway (queue paused), delivered after the salvage to a recording echo`,
      faults:
        'node stopped, three leaf pages of the entries in queue.db overwritten with noise, node started again; then hivenode queue salvage and a start on the salvaged store',
    },
    90_000,
    async (figures) => {
      const q = await damagedQueue(figures, (n) => (node = n));
      const file = nodeFile(q.dir, q.record);
      const refused = await runNodeToExit(file);
      expect(refused.code, refused.stderr).to.equal(2);
      expect(refused.stderr.trim().split('\n'), refused.stderr).to.have.length(1);
      expect(refused.stderr).to.contain(`hivenode queue salvage ${q.storeDir}`);
      figures['start on the damaged store'] = `exit ${refused.code}, one line naming 'hivenode queue salvage <dir>'`;

      const salvage = spawnSync(process.execPath, [...HIVENODE_ARGS, 'queue', 'salvage', q.storeDir], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(salvage.status, salvage.stderr + salvage.stdout).to.equal(0);
      const entriesLine = salvage.stdout.split('\n').find((l) => l.trim().startsWith('entries'));
      expect(entriesLine, salvage.stdout)
        .to.contain(`${ENTRIES - q.onDamagedPages} rows recovered`)
        .and.to.contain(`${q.onDamagedPages} rows lost`);
      figures['salvage report (entries)'] = entriesLine!.trim().replace(/ \(keys .*\)$/, '');
      const kept = readdirSync(q.storeDir).filter((f) => /^queue\.db\.damaged-[^-]+.*Z$/.test(f));
      expect(kept, 'the damaged file, kept').to.have.length(1);
      expect(readFileSync(join(q.storeDir, kept[0]!)).equals(q.bytes)).to.equal(true);

      node = await startNodeProcess(file);
      expectDelivered(q, await deliver(node.port, q.record, ENTRIES - q.onDamagedPages), figures);
      await node.kill('SIGTERM');
      node = undefined;
    },
  );

  it('StoreRecovery: salvage salvages at the start by itself, warns with the counts, and the queue delivers what was recovered', async () => {
    const figures: Figures = {};
    const q = await damagedQueue(figures, (n) => (node = n));
    node = await startNodeProcess(nodeFile(q.dir, q.record, ', StoreRecovery: salvage'));
    const warned = node
      .output()
      .split('\n')
      .find((l) => l.includes('was salvaged'));
    expect(warned, node.output()).to.match(/WARN/i);
    expect(warned)
      .to.contain(`entries ${ENTRIES - q.onDamagedPages} recovered, ${q.onDamagedPages} lost`)
      .and.to.contain('queue.db.damaged-');
    expectDelivered(q, await deliver(node.port, q.record, ENTRIES - q.onDamagedPages), figures);
  });
});
