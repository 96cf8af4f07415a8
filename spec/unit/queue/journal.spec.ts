/**
 * The journal of Durability journal (actors/queue/jetstream-journal.ts, journaled-log.ts) on a shared
 * log in memory that can lose its newest records as a power cut of every server does: what the stream
 * lost is published again in order, fenced, with the same message ids; what survived is not published
 * twice; a fenced append naming a position that moved still goes on; another node's writes after the
 * lost records stop the journal rather than undo them; a restart publishes what the journal kept; a
 * record held long enough is released, one never acknowledged is not. And the Durability choice.
 */
import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { chooseDurability, partitionWarning } from '../../../actors/queue/durability.js';
import { LogJournal } from '../../../actors/queue/jetstream-journal.js';
import { JournaledLog } from '../../../actors/queue/journaled-log.js';
import type { LogRecord, SharedLog } from '../../../actors/hive/transport.js';
import { LogFencedError } from '../../../actors/hive/transport.js';
import { createLogger } from '../../../actors/observe/logger.js';
import { ConfigError } from '../../../protocol/errors.js';
import { tempDir } from '../../temp.js';
import { sleep } from '../../support/wait.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const text = (r: LogRecord): string => dec.decode(r.data);

/** A shared log in memory with message-id deduplication and a power cut that drops its newest records. */
class LosingLog implements SharedLog {
  readonly maxRecordBytes = 1 << 20;
  readonly servers = { version: '2.9.10' };
  records: (LogRecord & { id: string })[] = [];
  private seq = 0;
  appends = 0;

  async append(topic: string, data: Uint8Array, after?: number, id = `r${Math.random()}`): Promise<number> {
    this.appends++;
    const dup = this.records.find((r) => r.id === id);
    if (dup) return dup.seq;
    if (after !== undefined) {
      const last = [...this.records].reverse().find((r) => r.topic === topic);
      if ((last?.seq ?? 0) !== after) throw new LogFencedError(`wrong last sequence: ${last?.seq ?? 0}`);
    }
    const seq = ++this.seq;
    this.records.push({ seq, topic, data, id });
    return seq;
  }
  /** Power cut: the newest `n` records are gone (the servers' positions go back with them). */
  lose(n: number): void {
    this.records.splice(this.records.length - n, n);
    this.seq = this.records[this.records.length - 1]?.seq ?? 0;
  }
  async read(pattern: string, onRecords: (records: LogRecord[]) => void | Promise<void>, from = 1): Promise<void> {
    await onRecords(this.records.filter((r) => r.topic === pattern && r.seq >= from));
  }
  async count(pattern: string): Promise<number> {
    return this.records.filter((r) => r.topic === pattern).length;
  }
  async last(topic: string): Promise<LogRecord | undefined> {
    return [...this.records].reverse().find((r) => r.topic === topic);
  }
  async end(): Promise<number> {
    return this.seq;
  }
  async purge(): Promise<number> {
    return 0;
  }
  topic(t: string): string[] {
    return this.records.filter((r) => r.topic === t).map(text);
  }
}

const log = createLogger({ level: 'error' });

describe('queue journal (Durability journal)', () => {
  const opened: LogJournal[] = [];
  afterEach(async () => {
    for (const j of opened.splice(0)) await j.close();
  });
  const open = async (dir: string, holdMs = 60_000, now?: () => number): Promise<LogJournal> => {
    const j = await LogJournal.open(dir, 'HIVENODE_LOG_test@1', holdMs, log, now);
    opened.push(j);
    return j;
  };

  /** `n` fenced appends to 'log' (and a kept entry beside every third), as the store makes them. */
  async function write(journaled: JournaledLog, from: number, n: number, tail: number): Promise<number> {
    for (let i = from; i < from + n; i++) {
      if (i % 3 === 0) await journaled.append(`kept.dead.k${i}`, enc.encode(`kept ${i}`));
      tail = await journaled.append('log', enc.encode(`op ${i}`), tail);
    }
    return tail;
  }

  it('publishes again, in order and fenced, the records a power cut of the servers lost; the survivors once', async () => {
    const stream = new LosingLog();
    const journaled = new JournaledLog(stream, await open(tempDir('hn-jnl-')), log, new Set(['snap']));
    const tail = await write(journaled, 0, 10, 0);
    stream.lose(6);
    const appendsBefore = stream.appends;
    const r = await journaled.recover();
    expect(r.republished).to.equal(6);
    expect(stream.topic('log')).to.deep.equal(Array.from({ length: 10 }, (_, i) => `op ${i}`));
    expect(stream.records.filter((x) => x.topic.startsWith('kept.')).length).to.equal(4);
    expect(stream.appends - appendsBefore).to.equal(6);
    // the store still names the old position of its last record: it was moved, the append goes on
    const next = await journaled.append('log', enc.encode('op 10'), tail);
    // and the position it got is taken as it is, whatever old position had the same number
    await journaled.append('log', enc.encode('op 11'), next);
    expect(stream.topic('log').slice(-2)).to.deep.equal(['op 10', 'op 11']);
  });

  it('a fenced append that finds the stream gone back publishes the lost records again first, then itself', async () => {
    const stream = new LosingLog();
    const journaled = new JournaledLog(stream, await open(tempDir('hn-jnl-')), log, new Set(['snap']));
    const tail = await write(journaled, 0, 5, 0);
    stream.lose(3);
    await journaled.append('log', enc.encode('op 5'), tail);
    expect(stream.topic('log')).to.deep.equal(['op 0', 'op 1', 'op 2', 'op 3', 'op 4', 'op 5']);
  });

  it('another node wrote after the lost records: nothing is undone, the append is refused as fenced', async () => {
    const stream = new LosingLog();
    const journaled = new JournaledLog(stream, await open(tempDir('hn-jnl-')), log, new Set(['snap']));
    const tail = await write(journaled, 0, 5, 0);
    stream.lose(2);
    const theirs = await stream.append('log', enc.encode('their op'), (await stream.last('log'))!.seq);
    const e = await journaled.append('log', enc.encode('op 5'), tail).catch((err: unknown) => err);
    expect(e).to.be.instanceOf(LogFencedError);
    expect(stream.topic('log')).to.deep.equal(['op 0', 'op 1', 'op 2', 'their op']);
    expect((await stream.last('log'))!.seq).to.equal(theirs);
    // a second look changes nothing: the lost records stay out of the stream
    expect((await journaled.recover()).republished).to.equal(0);
    expect(stream.topic('log')).to.deep.equal(['op 0', 'op 1', 'op 2', 'their op']);
  });

  it('after a restart of the node, the records its journal kept and the stream lost are published again', async () => {
    const dir = tempDir('hn-jnl-');
    const stream = new LosingLog();
    const first = await open(dir);
    await write(new JournaledLog(stream, first, log, new Set(['snap'])), 0, 8, 0);
    stream.lose(4);
    await first.close();
    opened.splice(opened.indexOf(first), 1);
    const again = new JournaledLog(stream, await open(dir), log, new Set(['snap']));
    const r = await again.recover();
    expect(r.kept).to.equal(8 + 3);
    expect(stream.topic('log')).to.deep.equal(Array.from({ length: 8 }, (_, i) => `op ${i}`));
    expect(stream.records.filter((x) => x.topic.startsWith('kept.')).map(text)).to.deep.equal([
      'kept 0',
      'kept 3',
      'kept 6',
    ]);
  });

  it('a journal written for another stream (deleted and made again, another hive) is emptied, not published into this one', async () => {
    const dir = tempDir('hn-jnl-');
    const first = await open(dir);
    await write(new JournaledLog(new LosingLog(), first, log, new Set(['snap'])), 0, 3, 0);
    await first.close();
    opened.splice(opened.indexOf(first), 1);
    const other = await LogJournal.open(dir, 'HIVENODE_LOG_test@2', 60_000, log);
    opened.push(other);
    expect(other.kept()).to.deep.equal([]);
  });

  it('nodes sharing a PersistPath take journal slots of their own', async () => {
    const dir = tempDir('hn-jnl-');
    const a = await open(dir);
    const b = await open(dir);
    expect(a.dir).to.equal(join(dir, 'journal-0'));
    expect(b.dir).to.equal(join(dir, 'journal-1'));
  });

  it('releases a record once it was held long enough after its acknowledgement, with the connection up', async function () {
    this.timeout(10_000);
    let now = 1_000_000;
    const stream = new LosingLog();
    const journal = await open(tempDir('hn-jnl-'), 60_000, () => now);
    const journaled = new JournaledLog(stream, journal, log, new Set(['snap']));
    const tail = await write(journaled, 0, 3, 0);
    now += 6_000; // the segment is finished (a new one is begun every 5 s)
    await write(journaled, 3, 1, tail);
    now += 30_000;
    await sleep(1_200);
    expect(journal.kept().length, 'released before the servers surely synced').to.equal(6);
    now += 25_000; // 61 s after the first segment's acknowledgements, 55 s after the second's
    await sleep(1_200);
    expect(journal.kept().map((r) => dec.decode(r.data))).to.deep.equal(['kept 3', 'op 3']);
    // an outage (here: a recovery) holds everything kept for the whole interval again
    await journaled.recover();
    now += 59_000;
    await sleep(1_200);
    expect(journal.kept().length).to.equal(2);
    now += 2_000;
    await sleep(1_200);
    expect(journal.kept()).to.deep.equal([]);
    expect(readdirSync(journal.dir).filter((f) => f.endsWith('.jnl'))).to.deep.equal([]);
  });

  it('Durability: fsync is refused on nats-server 2.9 in one line naming the cause and the fix; the default is journal', () => {
    const e = (() => {
      try {
        chooseDurability('fsync', { version: '2.9.10' });
      } catch (err) {
        return err as Error;
      }
      return undefined;
    })();
    expect(e).to.be.instanceOf(ConfigError);
    expect(e!.message).to.not.include('\n');
    expect(e!.message).to.match(/2\.9\.10.*60 s.*2\.10.*Durability journal/);
    expect(chooseDurability('', { version: '2.9.10' })).to.include({ level: 'journal', holdMs: 240_000 });
    expect(chooseDurability('', { version: '2.10.4' })).to.include({ level: 'journal', holdMs: 300_000 });
    expect(chooseDurability('fsync', { version: '2.10.4' }).level).to.equal('fsync');
    expect(() => chooseDurability('fsync', { version: '2.12.1', persistMode: 'async' })).to.throw(
      ConfigError,
      /persist_mode: async/,
    );
    expect(chooseDurability('replicated', { version: '2.9.10' }).level).to.equal('replicated');
  });

  it('warns of servers before 2.10 under a replicated stream: 2.9.10 lost acknowledged entries in the partition row', () => {
    expect(partitionWarning('2.9.10', 3)).to.match(
      /^nats-server 2\.9\.10 lost acknowledged entries .* run nats-server 2\.10 or later$/,
    );
    expect(partitionWarning('2.9.10', 1), 'one copy: no partition between copies').to.equal(undefined);
    expect(partitionWarning('2.10.27', 3)).to.equal(undefined);
    expect(partitionWarning('2.12.1', 5)).to.equal(undefined);
  });
});
