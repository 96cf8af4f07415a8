/**
 * Priorities and weighted fairness (priority.ts, group-weights.ts, groups.ts with Fairness
 * weighted): the rank orders priority above seq, a start reads the priority from the unparsed
 * document, GroupWeights is read strictly, and the gate gives busy groups turns by weight whatever
 * their backlog, each group in its own order, a group back from idle without credit.
 */
import { expect } from 'chai';
import type { QueueEntry } from '../../../actors/queue/entry.js';
import { EntryState, putOp } from '../../../actors/queue/entry.js';
import { parseGroupWeights } from '../../../actors/queue/group-weights.js';
import { GroupGate } from '../../../actors/queue/groups.js';
import { MinHeap } from '../../../actors/queue/heap.js';
import { rank, rankOf, storedPriority } from '../../../actors/queue/priority.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';

let seq = 0;
const entry = (key: string, tenant: string, priority?: number): QueueEntry => ({
  key,
  seq: ++seq,
  ...(priority !== undefined ? { priority } : {}),
  message: makeMessage({ Data: mapOf({ tenant: [tenant], priority: ['7'] }) }),
  channel: 'target',
  mode: 'call',
  requeueTimerMs: 0,
  requeueCount: 0,
  deadLetter: '',
  attempts: 0,
  state: EntryState.Waiting,
  dueAt: 0,
  createdAt: '',
  history: [],
});

describe('queue priorities and Fairness weighted', () => {
  it('the rank puts a higher priority first and seq order within one priority', () => {
    expect(rank(5, 9)).to.be.below(rank(1, 8));
    expect(rank(1, 3)).to.be.below(rank(2, 3));
    expect(rank(2 ** 47, 0)).to.be.below(Number.MAX_SAFE_INTEGER);
  });

  it('a stored document gives its priority unparsed; a Data field named priority is not it', () => {
    expect(storedPriority(putOp(entry('a', 't', 7)).doc)).to.equal(7);
    expect(storedPriority(putOp(entry('b', 't')).doc), 'no priority: 0, whatever the Data').to.equal(0);
  });

  it('GroupWeights reads <group>=<weight> pairs and * for the rest; anything else is refused', () => {
    const w = parseGroupWeights(' tenant-a=3; *=2 ;b=1000');
    expect([...w.named]).to.deep.equal([
      ['tenant-a', 3],
      ['b', 1000],
    ]);
    expect(w.other).to.equal(2);
    expect(parseGroupWeights('').other).to.equal(1);
    for (const bad of ['a', 'a=0', 'a=1001', '=3', 'a=x', 'a=1;a=2'])
      expect(() => parseGroupWeights(bad), bad).to.throw();
  });

  it('busy groups take turns by weight, each in its own order (priority, then seq); an idle group comes back without credit', () => {
    const gate = new GroupGate(
      { groupBy: 'tenant', concurrency: 0, rate: undefined, weights: parseGroupWeights('a=3') },
      () => undefined,
    );
    const ready = new MinHeap<string>();
    const entries = new Map<string, QueueEntry>();
    const add = (e: QueueEntry): void => {
      entries.set(e.key, e);
      ready.push(rankOf(e), e.key);
    };
    for (let i = 0; i < 100; i++) add(entry(`a${i}`, 'a'));
    for (let i = 0; i < 100; i++) add(entry(`b${i}`, 'b'));
    add(entry('b-urgent', 'b', 9));
    const take = (n: number): string[] => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) {
        const e = gate.take(ready, (k) => (entries.get(k)?.state === EntryState.Waiting ? entries.get(k) : undefined))!;
        e.state = EntryState.Delivering;
        gate.finished(e.key);
        out.push(e.key);
      }
      return out;
    };
    const first = take(40);
    expect(first.filter((k) => k.startsWith('a'))).to.have.length(30);
    expect(first.filter((k) => k.startsWith('b'))[0], 'priority first within its group').to.equal('b-urgent');
    expect(first.filter((k) => k.startsWith('a'))).to.deep.equal(Array.from({ length: 30 }, (_, i) => `a${i}`));
    // c arrives after 40 turns: it is served within the next few, not ahead of everything by 40 turns of credit
    add(entry('c0', 'c'));
    add(entry('c1', 'c'));
    const next = take(10);
    expect(next.indexOf('c0')).to.be.within(0, 2);
    expect(next.indexOf('c1'), 'no burst of credit: c takes turns like the others').to.be.above(next.indexOf('c0') + 1);
  });
});
