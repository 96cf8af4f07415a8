/**
 * The batch's message and outcomes (batches.ts; README, The queue: Batches): Data as parallel lists
 * with '' for a field an entry lacks and its first value for a field of several, Control keys; the
 * per-entry Results of Data codes and messages, the batch's Result for all without codes, and a 502
 * for every entry when codes cannot be matched to the keys; open batches by channel and group, the
 * full one first, a partial one once its window is over.
 */
import { expect } from 'chai';
import { BatchBuffers, batchMessage, entryResults } from '../../../actors/queue/batches.js';
import type { QueueEntry } from '../../../actors/queue/entry.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import type { Result } from '../../../protocol/message.js';

let seq = 0;
function entry(data: Record<string, string[]>, channel = 'target', control: Record<string, string[]> = {}): QueueEntry {
  seq++;
  return {
    key: `k${seq}`,
    seq,
    message: makeMessage({ Class: 'c', Operation: 'o', Control: mapOf(control), Data: mapOf(data) }),
    channel,
    mode: 'call',
    requeueTimerMs: 1000,
    requeueCount: 1,
    deadLetter: '',
    attempts: 0,
    state: 'waiting',
    dueAt: 0,
    createdAt: '',
    history: [],
  };
}
const result = (code: number, data: Record<string, string[]> = {}): Result => ({
  Code: code,
  Message: code === 200 ? 'Success' : 'failed',
  Data: mapOf(data),
  List: null,
});

describe('queue batches: message, outcomes and open batches', () => {
  it('lays the entries out as parallel lists, in order, with Control keys', () => {
    const a = entry({ id: ['1'], name: ['a', 'second value'] }, 'target', { traceparent: ['00-x'] });
    const b = entry({ id: ['2'] });
    const m = batchMessage([a, b]);
    expect({ ...m.Data }).to.deep.equal({ id: ['1', '2'], name: ['a', ''] });
    expect(m.Control.keys).to.deep.equal([a.key, b.key]);
    expect(m.Control.traceparent, "the first entry's controls go on").to.deep.equal(['00-x']);
    expect([m.Class, m.Operation]).to.deep.equal(['c', 'o']);
  });

  it('reads Data codes (and messages) per entry; without codes the one Result is every entry’s', () => {
    const keys = ['a', 'b', 'c'];
    const per = entryResults(
      result(207, { codes: ['200', '400', '503'], messages: ['', 'bad row', 'busy'], retry_after: ['5'] }),
      keys,
    );
    expect(per.problem).to.equal(undefined);
    expect(per.results.map((r) => [r.Code, r.Message])).to.deep.equal([
      [200, '200 for entry 1 of a batch of 3'],
      [400, 'bad row'],
      [503, 'busy'],
    ]);
    expect(per.results[2]!.Data.retry_after).to.deep.equal(['5']);
    const all = entryResults(result(503), keys);
    expect(all.results.map((r) => r.Code)).to.deep.equal([503, 503, 503]);
  });

  it('codes of the wrong length, or not Codes, fail every entry with 502 naming what was wrong', () => {
    const short = entryResults(result(200, { codes: ['200'] }), ['a', 'b']);
    expect(short.problem).to.match(/1 code\(s\) in Data codes for a batch of 2 entries/);
    expect(short.results.map((r) => r.Code)).to.deep.equal([502, 502]);
    const words = entryResults(result(200, { codes: ['ok', '200'] }), ['a', 'b']);
    expect(words.problem).to.match(/not all Codes from 100 to 599/);
    expect(words.results.map((r) => r.Code)).to.deep.equal([502, 502]);
  });

  it('keeps a batch per channel and group; a full one goes first, a partial one once its window is over', () => {
    const b = new BatchBuffers({ size: 2, windowMs: 100, groupBy: 'g' });
    const now = 1_000;
    b.add(entry({ g: ['x'] }, 'one'), now);
    b.add(entry({ g: ['y'] }, 'one'), now);
    expect(b.takeDue(now), 'nothing full, no window over').to.equal(undefined);
    const third = entry({ g: ['y'] }, 'one');
    expect(b.add(third, now + 10).room).to.equal(0);
    expect(b.hasFull).to.equal(true);
    const full = b.takeDue(now + 10)!;
    expect(full.entries.map((e) => e.message.Data.g![0])).to.deep.equal(['y', 'y']);
    expect(b.takeDue(now + 99)).to.equal(undefined);
    expect(b.takeDue(now + 100)!.entries).to.have.length(1);
    expect(b.entries).to.equal(0);
  });
});
