/**
 * Group limits: with GroupBy, entries belong to the group of their GroupBy value, and a
 * group delivers at most GroupConcurrency entries at once and starts at most GroupRate of them per
 * window (group-rate.ts). A group at its limit sets its entries aside without holding up any other
 * group (no head-of-line blocking), and they come back in seq order once it is free again: when an
 * entry of the group has its outcome, or the group's next rate token is due.
 *
 * Layout: the queue's ready heap stays the intake. An entry is given its group when it is the oldest
 * candidate (so once per time it becomes ready, and stored entries are only parsed when reached);
 * each group keeps its entries in a heap by seq, and the groups free to start are in one heap keyed
 * by their oldest entry's seq. Taking the smaller of the ready heap's head and that heap's head
 * keeps delivery FIFO across free groups, and strictly FIFO within a group when
 * DeliveryConcurrency is 1 (docs/ARCHITECTURE.md, The life of one queue entry). The heaps are keyed
 * by rank (priority.ts): a higher priority goes first, seq order within one priority.
 *
 * Fairness weighted (README, Priorities and fairness) keys the free heap by each group's pass
 * instead (stride scheduling): a delivery adds 1/weight to its group's pass and the group with the
 * lowest pass goes next, so busy groups take turns in proportion to GroupWeights whatever their
 * backlog. A group that comes back from idle starts at the pass of the last group served: time
 * idle earns no credit. Every ready entry is admitted to its group at once, as the turns are taken
 * among groups, not among entries.
 */
import { ConfigError, describeError } from '../../protocol/errors.js';
import type { QueueConfig } from './command-parser.js';
import type { QueueEntry } from './entry.js';
import type { GroupRate } from './group-rate.js';
import { GROUP_RATE_FORM, TokenBucket, parseGroupRate } from './group-rate.js';
import { MinHeap } from './heap.js';
import { attributeOf } from './responses.js';
import { rankOf } from './priority.js';
import type { GroupWeights } from './group-weights.js';
import { GROUP_WEIGHTS_FORM, parseGroupWeights, weightOf } from './group-weights.js';
import type { GroupOrder } from './group-order.js';
import { GroupHolds, groupOrderOf } from './group-order.js';

/** The compiled limits; undefined (no gate at all) when GroupBy is '' or neither limit is set. */
export interface GroupLimits {
  /** An entry attribute (channel, mode, class, operation) or a Data field; a missing field is group ''. */
  groupBy: string;
  /** Entries of one group delivered at once; 0 = unlimited. */
  concurrency: number;
  rate: GroupRate | undefined;
  /** Fairness weighted: the weights of the groups; undefined: fifo. */
  weights?: GroupWeights | undefined;
  /** GroupOrder (group-order.ts): one entry of a group at a time, in arrival order, held while one retries. */
  order?: GroupOrder | undefined;
  /** BatchSize above 1 (batches.ts): every ready entry joins its group at once, where a batch finds its companions. */
  batched?: boolean;
}

/**
 * The group limits of a configuration, checked once at start: a GroupRate it cannot read, limits
 * without GroupBy, or GroupBy `state` (which changes with delivery) stop the start with a
 * ConfigError naming the parameter and what it accepts.
 */
export function groupLimitsOf(
  config: Pick<QueueConfig, 'GroupBy' | 'GroupConcurrency' | 'GroupRate' | 'Fairness' | 'GroupWeights' | 'GroupOrder'> &
    Partial<Pick<QueueConfig, 'BatchSize'>>,
): GroupLimits | undefined {
  let rate: GroupRate | undefined;
  try {
    rate = parseGroupRate(config.GroupRate);
  } catch (e) {
    throw new ConfigError(`GroupRate: ${describeError(e)}; expected ${GROUP_RATE_FORM}`);
  }
  const weighted = config.Fairness === 'weighted';
  let weights: GroupWeights | undefined;
  try {
    weights = weighted ? parseGroupWeights(config.GroupWeights) : undefined;
  } catch (e) {
    throw new ConfigError(`GroupWeights: ${describeError(e)}; expected ${GROUP_WEIGHTS_FORM}`);
  }
  if (!weighted && config.GroupWeights.trim() !== '')
    throw new ConfigError(
      'GroupWeights weighs the groups only with Fairness weighted; set Fairness: weighted, or leave GroupWeights out',
    );
  const order = groupOrderOf(config);
  const groupBy = config.GroupBy.trim();
  if (groupBy === '') {
    if (config.GroupConcurrency > 0 || rate || weighted)
      throw new ConfigError(
        `${weighted ? 'Fairness weighted shares deliveries among groups' : rate ? 'GroupRate limits groups' : 'GroupConcurrency limits groups'}, but GroupBy is empty; expected GroupBy to name an entry attribute (channel, mode, class, operation) or a Data field`,
      );
    return undefined;
  }
  if (groupBy === 'state')
    throw new ConfigError(
      "GroupBy: 'state' changes while an entry is delivered; expected an entry attribute (channel, mode, class, operation) or a Data field",
    );
  if (config.GroupConcurrency === 0 && !rate && !weighted && !order) return undefined;
  // strict order is one entry of a group at a time
  return {
    groupBy,
    concurrency: order ? 1 : config.GroupConcurrency,
    rate,
    ...(weights ? { weights } : {}),
    ...(order ? { order } : {}),
    ...((config.BatchSize ?? 1) > 1 ? { batched: true } : {}),
  };
}

/** Not in the free heap. */
const UNLISTED = -1;

class Group {
  /** Keys by seq: waiting entries set aside, and stale keys (deleted, stepped) dropped when reached. */
  readonly waiting = new MinHeap<string>();
  inFlight = 0;
  /** The seq the group is listed under in the free heap, or UNLISTED; an older listing is stale. */
  listed = UNLISTED;
  /** In the starved heap, waiting for a rate token. */
  starved = false;
  /** Fairness weighted: the virtual time of the group's next turn (1/weight more per delivery). */
  pass = 0;

  constructor(
    readonly name: string,
    readonly bucket: TokenBucket | undefined,
    /** Fairness weighted: what one delivery adds to `pass`. */
    readonly stride: number,
  ) {}
}

export class GroupGate {
  private readonly groups = new Map<string, Group>();
  /** Groups free to start, by the seq of their oldest entry. */
  private readonly free = new MinHeap<Group>();
  /** Groups with entries and room, but no rate token yet, by when the next token is due. */
  private readonly starved = new MinHeap<Group>();
  /** Idle groups whose rate bucket is not full yet, by when it is (then they are forgotten). */
  private readonly retiring = new MinHeap<Group>();
  /** The group of each entry being delivered, for its outcome. */
  private readonly delivering = new Map<string, Group>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = 0;
  /** Fairness weighted: the pass of the group served last, where a group back from idle starts. */
  private vtime = 0;

  /** GroupOrder: the groups held by an entry that retries or is dead (group-order.ts). */
  readonly holds: GroupHolds | undefined;

  /** `wake` asks the queue actor to pump again (when a starved group's token is due). */
  constructor(
    readonly limits: GroupLimits,
    private readonly wake: () => void,
  ) {
    this.holds = limits.order ? new GroupHolds(limits.order) : undefined;
  }

  /** Groups known now (with entries, in flight, or their rate bucket not full yet). */
  get size(): number {
    return this.groups.size;
  }

  /**
   * The next entry to deliver, counted as in flight in its group, or undefined when every ready
   * entry's group is at its limit. Takes entries from `ready` (keys by seq) as they become the
   * oldest candidate; `waitingEntry` gives the entry of a key if it is still waiting.
   */
  take(
    ready: MinHeap<string>,
    waitingEntry: (key: string) => QueueEntry | undefined,
    now = Date.now(),
  ): QueueEntry | undefined {
    this.feedStarved(now);
    this.retireIdle(now);
    if (this.limits.weights || this.holds || this.limits.batched) {
      // turns are among groups, strict order is within each group, and a batch's companions are in
      // its group: every ready entry joins its group first
      while (ready.size > 0) {
        const e = waitingEntry(ready.pop()!);
        if (e) this.admit(e, now);
      }
    }
    for (;;) {
      const readySeq = ready.peekPriority();
      const freeSeq = this.free.peekPriority();
      if (readySeq === undefined && freeSeq === undefined) return undefined;
      if (freeSeq === undefined || (readySeq !== undefined && readySeq < freeSeq)) {
        const e = waitingEntry(ready.pop()!);
        if (e) this.admit(e, now);
        continue;
      }
      const g = this.free.pop()!;
      if (g.listed !== freeSeq) continue; // listed again since, under an older seq
      g.listed = UNLISTED;
      if (!this.canStart(g, now)) {
        this.offer(g, now); // a step took its room or its token meanwhile
        continue;
      }
      const e = waitingEntry(g.waiting.pop()!);
      if (!e) {
        this.offer(g, now);
        continue;
      }
      this.count(g, e.key, now);
      if (this.limits.weights) {
        this.vtime = Math.max(this.vtime, g.pass);
        g.pass += g.stride;
      }
      this.offer(g, now);
      return e;
    }
  }

  /**
   * Batches (batches.ts): up to `max` more waiting entries of `first`'s group that `joins` accepts,
   * in the group's order, taken without counting them: a batch is one delivery of its group, which
   * GroupConcurrency and GroupRate count once (by its first entry). Entries `joins` refuses keep
   * their place; at most 4 × `max` are looked at, so a group mixing channels costs no scan of it all.
   */
  more(
    first: QueueEntry,
    max: number,
    waitingEntry: (key: string) => QueueEntry | undefined,
    joins: (e: QueueEntry) => boolean,
    now = Date.now(),
  ): QueueEntry[] {
    const g = this.groups.get(attributeOf(first, this.limits.groupBy));
    if (!g || max <= 0) return [];
    const taken: QueueEntry[] = [];
    const aside: QueueEntry[] = [];
    let looked = 0;
    while (taken.length < max && g.waiting.size > 0 && looked++ < max * 4) {
      const e = waitingEntry(g.waiting.pop()!);
      if (!e) continue;
      if (joins(e)) taken.push(e);
      else aside.push(e);
    }
    for (const e of aside) g.waiting.push(rankOf(e), e.key);
    this.offer(g, now);
    return taken;
  }

  /** A `step` delivers its entry now, limits or not (an operator's action), but it counts in its group. */
  stepped(e: QueueEntry, now = Date.now()): void {
    this.count(this.groupOf(e, now), e.key, now);
  }

  /**
   * GroupOrder: a failed entry holds its group (retrying; dead with strict). Told before finished(),
   * so the group is not listed again in between.
   */
  failed(e: QueueEntry, dead: boolean): void {
    this.holds?.failed(e.key, attributeOf(e, this.limits.groupBy), dead);
  }

  /** GroupOrder: the entry holds its group no more (deleted, replayed, dropped): the group goes on. */
  release(key: string, now = Date.now()): void {
    const group = this.holds?.release(key);
    const g = group === undefined ? undefined : this.groups.get(group);
    if (g) this.offer(g, now);
  }

  /** GroupOrder: a dead entry moved to the dead set holds its group from there (strict). */
  kept(key: string): void {
    this.holds?.kept(key);
  }

  /** GroupOrder strict: the dead set's entries per group, counted in the store; every group is looked at again. */
  setDeadKept(counts: Map<string, number>, now = Date.now()): void {
    this.holds?.setDeadKept(counts);
    for (const g of [...this.groups.values()]) this.offer(g, now);
  }

  /** An entry's delivery ended (outcome, or the entry was deleted): its group has room again. */
  finished(key: string, now = Date.now()): void {
    const g = this.delivering.get(key);
    if (!g) return;
    this.delivering.delete(key);
    g.inFlight--;
    this.offer(g, now);
  }

  /** `clear`: every entry is gone, so is every group (deliveries still out are nobody's now). */
  clear(): void {
    this.groups.clear();
    this.holds?.clear();
    this.free.clear();
    this.starved.clear();
    this.retiring.clear();
    this.delivering.clear();
    this.vtime = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Puts a ready entry into its group (the GroupBy value is read here, once per time it is ready). */
  private admit(e: QueueEntry, now: number): void {
    const g = this.groupOf(e, now);
    // a retrying entry due again: its group goes on with it, its oldest entry
    this.holds?.release(e.key);
    g.waiting.push(this.holds ? e.seq : rankOf(e), e.key);
    this.offer(g, now);
  }

  private groupOf(e: QueueEntry, now: number): Group {
    const name = attributeOf(e, this.limits.groupBy);
    let g = this.groups.get(name);
    if (!g) {
      g = new Group(
        name,
        this.limits.rate ? new TokenBucket(this.limits.rate, now) : undefined,
        this.limits.weights ? 1 / weightOf(this.limits.weights, name) : 0,
      );
      this.groups.set(name, g);
    }
    return g;
  }

  private count(g: Group, key: string, now: number): void {
    g.inFlight++;
    g.bucket?.take(now);
    this.delivering.set(key, g);
  }

  private canStart(g: Group, now: number): boolean {
    return (this.limits.concurrency === 0 || g.inFlight < this.limits.concurrency) && (g.bucket?.has(now) ?? true);
  }

  /**
   * Lists a group that has entries and can start one in the free heap; one out of tokens waits in
   * the starved heap, one at its concurrency limit comes back with `finished`, an idle one retires.
   */
  private offer(g: Group, now: number): void {
    const head = g.waiting.peekPriority();
    if (head === undefined) {
      if (g.inFlight === 0) this.retire(g, now);
      return;
    }
    if (this.limits.concurrency > 0 && g.inFlight >= this.limits.concurrency) return;
    if (this.holds?.holds(g.name)) return;
    if (g.bucket && !g.bucket.has(now)) {
      if (!g.starved) {
        g.starved = true;
        this.starved.push(g.bucket.nextAt(now), g);
        this.arm(now);
      }
      return;
    }
    let key = head;
    if (this.limits.weights) {
      // listed by its pass, which changes only when it is served (then it is unlisted)
      if (g.listed !== UNLISTED) return;
      g.pass = Math.max(g.pass, this.vtime);
      key = g.pass;
    }
    if (g.listed === key) return;
    g.listed = key;
    this.free.push(key, g);
  }

  /** Starved groups whose token is due are offered again. */
  private feedStarved(now: number): void {
    while ((this.starved.peekPriority() ?? Infinity) <= now) {
      const g = this.starved.pop()!;
      g.starved = false;
      if (this.groups.get(g.name) === g) this.offer(g, now);
    }
    this.arm(now);
  }

  /** One unref'd timer for the earliest starved group: a queue waiting only for tokens keeps no process alive. */
  private arm(now: number): void {
    const next = this.starved.peekPriority();
    if (next === undefined || (this.timer && this.timerAt <= next)) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = next;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.wake();
      },
      Math.max(1, next - now),
    ).unref();
  }

  /**
   * An idle group is forgotten at once without a rate; with one, only once its bucket is full
   * again, since forgetting it earlier would hand it a fresh burst. So groups by, say, a customer id
   * do not pile up.
   */
  private retire(g: Group, now: number): void {
    if (!g.bucket) {
      this.groups.delete(g.name);
      return;
    }
    this.retiring.push(g.bucket.fullAt(now), g);
  }

  private retireIdle(now: number): void {
    while ((this.retiring.peekPriority() ?? Infinity) <= now) {
      const g = this.retiring.pop()!;
      const idle = g.inFlight === 0 && g.waiting.size === 0 && g.bucket!.fullAt(now) <= now;
      if (idle && this.groups.get(g.name) === g) this.groups.delete(g.name);
    }
  }
}
