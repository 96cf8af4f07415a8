/**
 * Group limits: the gate's order (FIFO across free groups and within a group), the
 * concurrency limit without head-of-line blocking, GroupRate's token bucket, `step`, deletion and
 * `clear` while a group is at its limit, and the checks of the parameters at start. Time is passed
 * in, so nothing here waits.
 */
import { expect } from 'chai';
import type { QueueEntry } from '../../../actors/queue/entry.js';
import { EntryState } from '../../../actors/queue/entry.js';
import { TokenBucket, parseGroupRate } from '../../../actors/queue/group-rate.js';
import type { GroupLimits } from '../../../actors/queue/groups.js';
import { GroupGate, groupLimitsOf } from '../../../actors/queue/groups.js';
import { MinHeap } from '../../../actors/queue/heap.js';
import { ConfigError } from '../../../protocol/errors.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';

const T = 1_000_000;

/** A queue's ready heap and entries, as the gate sees them. */
class Bench {
  readonly ready = new MinHeap<string>();
  readonly entries = new Map<string, QueueEntry>();
  private seq = 0;
  readonly gate: GroupGate;

  constructor(limits: Omit<GroupLimits, 'groupBy'> & { groupBy?: string }) {
    this.gate = new GroupGate({ groupBy: 'tenant', ...limits }, () => undefined);
  }

  /** Adds ready entries named `<group><n>` (the name is the key), Data tenant = group. */
  add(...names: string[]): void {
    for (const name of names) {
      const seq = ++this.seq;
      const tenant = name.replace(/\d+$/, '');
      const data: Record<string, string[]> = tenant === '' ? {} : { tenant: [tenant] };
      this.entries.set(name, {
        key: name,
        seq,
        message: makeMessage({ Data: mapOf(data) }),
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
      this.ready.push(seq, name);
    }
  }

  /** Takes entries (marking them delivering) until the gate gives none or `max` are taken. */
  take(now = T, max = Infinity): string[] {
    const out: string[] = [];
    while (out.length < max) {
      const e = this.gate.take(
        this.ready,
        (k) => (this.entries.get(k)?.state === EntryState.Waiting ? this.entries.get(k) : undefined),
        now,
      );
      if (!e) break;
      e.state = EntryState.Delivering;
      out.push(e.key);
    }
    return out;
  }

  /** `step`: the entry goes now, counted in its group. */
  step(key: string): void {
    const e = this.entries.get(key)!;
    this.gate.stepped(e, T);
    e.state = EntryState.Delivering;
  }

  done(key: string, now = T): void {
    this.entries.delete(key);
    this.gate.finished(key, now);
  }
}

describe('queue group limits (groups.ts)', () => {
  it('without limits reached, entries leave in seq order across groups', () => {
    const b = new Bench({ concurrency: 0, rate: { count: 100, windowMs: 1000 } });
    b.add('a1', 'b1', 'a2', 'c1', 'b2');
    expect(b.take()).to.deep.equal(['a1', 'b1', 'a2', 'c1', 'b2']);
  });

  it('a group at its concurrency limit sets its entries aside; other groups go on (no head-of-line blocking)', () => {
    const b = new Bench({ concurrency: 1, rate: undefined });
    b.add('a1', 'a2', 'a3', 'b1', 'b2', 'c1');
    expect(b.take()).to.deep.equal(['a1', 'b1', 'c1']);
    b.done('b1');
    expect(b.take()).to.deep.equal(['b2']);
    expect(b.take(), 'a is still at its limit').to.deep.equal([]);
  });

  it('a freed group comes back in seq order: its older entries go before newer ones of other groups', () => {
    const b = new Bench({ concurrency: 1, rate: undefined });
    b.add('a1', 'a2', 'b1');
    expect(b.take(T, 2)).to.deep.equal(['a1', 'b1']);
    b.add('c1');
    b.done('a1');
    expect(b.take(T, 1), 'a2 (seq 2) before c1 (seq 4)').to.deep.equal(['a2']);
    expect(b.take()).to.deep.equal(['c1']);
  });

  it('one at a time (DeliveryConcurrency 1): each group keeps strict FIFO order', () => {
    const b = new Bench({ concurrency: 2, rate: undefined });
    b.add('a1', 'b1', 'a2', 'a3', 'b2', 'a4');
    const order: string[] = [];
    for (;;) {
      const [next] = b.take(T, 1);
      if (next === undefined) break;
      order.push(next);
      b.done(next);
    }
    expect(order).to.deep.equal(['a1', 'b1', 'a2', 'a3', 'b2', 'a4']);
  });

  it('GroupConcurrency n lets n of a group out at once', () => {
    const b = new Bench({ concurrency: 3, rate: undefined });
    b.add('a1', 'a2', 'a3', 'a4', 'a5');
    expect(b.take()).to.deep.equal(['a1', 'a2', 'a3']);
    b.done('a2');
    expect(b.take()).to.deep.equal(['a4']);
  });

  it("an entry without the GroupBy field is in group '', limited like any other", () => {
    const b = new Bench({ concurrency: 1, rate: undefined });
    b.add('1', '2', 'a1');
    expect(b.take()).to.deep.equal(['1', 'a1']);
    b.done('1');
    expect(b.take()).to.deep.equal(['2']);
  });

  it('GroupBy an entry attribute: channel', () => {
    const b = new Bench({ groupBy: 'channel', concurrency: 1, rate: undefined });
    b.add('a1', 'b1');
    b.entries.get('b1')!.channel = 'other';
    expect(b.take()).to.deep.equal(['a1', 'b1']);
  });

  it('GroupRate: a burst of count, then one more per window/count; other groups keep their own tokens', () => {
    const b = new Bench({ concurrency: 0, rate: { count: 2, windowMs: 1000 } });
    b.add('a1', 'a2', 'a3', 'a4', 'b1');
    expect(b.take(T)).to.deep.equal(['a1', 'a2', 'b1']);
    expect(b.take(T + 499)).to.deep.equal([]);
    expect(b.take(T + 500)).to.deep.equal(['a3']);
    expect(b.take(T + 999)).to.deep.equal([]);
    expect(b.take(T + 1000)).to.deep.equal(['a4']);
    b.gate.clear();
  });

  it('step counts in its group: a stepped entry holds the group at its limit until its outcome', () => {
    const b = new Bench({ concurrency: 1, rate: undefined });
    b.add('a1', 'a2');
    b.step('a2');
    expect(b.take()).to.deep.equal([]);
    b.done('a2');
    expect(b.take()).to.deep.equal(['a1']);
  });

  it('step beyond the limit is allowed and counted: the group waits for both outcomes', () => {
    const b = new Bench({ concurrency: 1, rate: undefined });
    b.add('a1', 'a2', 'a3');
    expect(b.take()).to.deep.equal(['a1']);
    b.step('a2');
    b.done('a1');
    expect(b.take(), 'a2 is still out').to.deep.equal([]);
    b.done('a2');
    expect(b.take()).to.deep.equal(['a3']);
  });

  it('a deleted entry set aside, or deleted while delivered, leaves no group stuck', () => {
    const b = new Bench({ concurrency: 1, rate: undefined });
    b.add('a1', 'a2', 'a3');
    expect(b.take()).to.deep.equal(['a1']);
    b.entries.delete('a2'); // set aside, then deleted: its key is dropped when reached
    b.done('a1'); // deleted while delivered: the delete command calls finished too
    expect(b.take()).to.deep.equal(['a3']);
  });

  it('clear while a group is at its limit: the group starts afresh, a late outcome changes nothing', () => {
    const b = new Bench({ concurrency: 1, rate: { count: 1, windowMs: 60_000 } });
    b.add('a1', 'a2');
    expect(b.take()).to.deep.equal(['a1']);
    b.entries.clear();
    b.ready.clear();
    b.gate.clear();
    b.gate.finished('a1', T);
    b.add('a3', 'a4');
    expect(b.take()).to.deep.equal(['a3']);
    expect(b.gate.size).to.equal(1);
    b.gate.clear();
  });

  it('idle groups are forgotten: at once without a rate, once their bucket is full with one', () => {
    const plain = new Bench({ concurrency: 1, rate: undefined });
    plain.add('a1', 'b1');
    plain.take();
    expect(plain.gate.size).to.equal(2);
    plain.done('a1');
    plain.done('b1');
    expect(plain.gate.size).to.equal(0);

    const rated = new Bench({ concurrency: 0, rate: { count: 2, windowMs: 1000 } });
    rated.add('a1');
    expect(rated.take(T)).to.deep.equal(['a1']);
    rated.done('a1', T);
    rated.take(T + 499);
    expect(rated.gate.size, 'half a window: a token short').to.equal(1);
    rated.take(T + 500);
    expect(rated.gate.size).to.equal(0);
  });
});

describe('queue GroupRate and group parameters', () => {
  it('reads <count>/<window> with a one-letter or duration window', () => {
    expect(parseGroupRate('')).to.equal(undefined);
    expect(parseGroupRate('  ')).to.equal(undefined);
    expect(parseGroupRate('10/s')).to.deep.equal({ count: 10, windowMs: 1000 });
    expect(parseGroupRate('600/1m')).to.deep.equal({ count: 600, windowMs: 60_000 });
    expect(parseGroupRate('5/10s')).to.deep.equal({ count: 5, windowMs: 10_000 });
    expect(parseGroupRate('1000/h')).to.deep.equal({ count: 1000, windowMs: 3_600_000 });
    expect(parseGroupRate('3 / m')).to.deep.equal({ count: 3, windowMs: 60_000 });
    expect(parseGroupRate('100/500ms')).to.deep.equal({ count: 100, windowMs: 500 });
    expect(parseGroupRate('1/1m30s')).to.deep.equal({ count: 1, windowMs: 90_000 });
  });

  it('refuses other forms with the reason', () => {
    const cases: Array<[string, RegExp]> = [
      ['10', /is not a rate/],
      ['ten/s', /is not a rate/],
      ['-1/s', /is not a rate/],
      ['10/s/s', /no readable window/],
      ['0/s', /the count must be 1 or more/],
      ['10/5', /without a unit/],
      ['10/d', /no readable window 'd'/],
      ['10/0s', /empty window/],
    ];
    for (const [text, reason] of cases) expect(() => parseGroupRate(text), text).to.throw(reason);
  });

  it('a token bucket starts full and refills at count per window, never beyond count', () => {
    const bucket = new TokenBucket({ count: 3, windowMs: 3000 }, T);
    for (let i = 0; i < 3; i++) {
      expect(bucket.has(T)).to.equal(true);
      bucket.take(T);
    }
    expect(bucket.has(T)).to.equal(false);
    expect(bucket.nextAt(T)).to.equal(T + 1000);
    expect(bucket.fullAt(T)).to.equal(T + 3000);
    bucket.take(T); // a step with no token left takes none
    expect(bucket.nextAt(T)).to.equal(T + 1000);
    expect(bucket.has(T + 100_000)).to.equal(true);
    expect(bucket.fullAt(T + 100_000)).to.equal(T + 100_000);
  });

  it('the start checks: GroupRate unreadable, limits without GroupBy, GroupBy state; no limit means no gate', () => {
    const cfg = (GroupBy: string, GroupConcurrency: number, GroupRate: string): GroupLimits | undefined =>
      groupLimitsOf({ GroupBy, GroupConcurrency, GroupRate, Fairness: 'fifo', GroupWeights: '', GroupOrder: '' });
    expect(cfg('', 0, '')).to.equal(undefined);
    expect(cfg('tenant', 0, ''), 'GroupBy alone limits nothing').to.equal(undefined);
    expect(cfg(' tenant ', 2, '10/s')).to.deep.equal({
      groupBy: 'tenant',
      concurrency: 2,
      rate: { count: 10, windowMs: 1000 },
    });
    const refused = (f: () => unknown, message: RegExp): void => {
      expect(f).to.throw(ConfigError, message);
    };
    refused(
      () => cfg('tenant', 0, 'fast'),
      /^GroupRate: 'fast' is not a rate; expected <count>\/<window>, such as 10\/s, 600\/1m, 5\/10s/,
    );
    refused(() => cfg('', 2, ''), /^GroupConcurrency limits groups, but GroupBy is empty/);
    refused(() => cfg('', 0, '10/s'), /^GroupRate limits groups, but GroupBy is empty/);
    refused(() => cfg('state', 1, ''), /^GroupBy: 'state' changes while an entry is delivered/);
  });
});
