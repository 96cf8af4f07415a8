/**
 * One active instance among the instances of one NAME on a NATS hive — the SQL pollers
 * and the queues on JetStream: a lease in a bucket shared by the nodes (SharedBucket:
 * JetStream KV). The holder renews it every third of the lease with a compare-and-set write; the others read it as often and take it over when
 * they have seen its revision unchanged for a whole lease period — measured on their own clock from
 * the moment they saw it, so no two machines' clocks are ever compared. The holder polls only while
 * its last renewal, counted from when it was sent, is younger than the lease: a follower's takeover
 * comes at least a lease period after that write reached the server, so two pollers never poll at
 * once (with clocks that run at the same rate). A holder that dies is replaced within
 * lease + 2 × lease/3 < two lease periods; one that stops hands the lease over at once: it deletes
 * the lease, and where the bucket tells of removals (NATS: a core message) a follower contends at once.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { describeError } from '../../protocol/errors.js';
import type { SharedBucket } from './transport.js';
import type { Logger } from '../observe/logger.js';

/** What a lease is for: how the log names the instance, a note the holder keeps in the lease, whom to tell of changes. */
export interface LeaseRole {
  /** The instance as the log names it: 'poller', 'queue holder'. */
  name: string;
  /** A note the holder writes with every renewal (after its name, on a line of its own): what a successor needs to know. */
  note?: () => string;
  /** Told when this instance starts or stops holding; `previous` is the last value of the lease it took over. */
  onChange?: (held: boolean, previous: string | undefined) => void;
  /**
   * Told when a holder that stopped renewing was replaced (by this instance or another), with a time
   * (Date.now()) before which whatever was sent to that holder went to it alone: it died after its last
   * renewal, and the next holder took over at least two thirds of a lease later (Lease.takeoverSeen).
   */
  onHolderDead?: (sentBefore: number) => void;
}

/** The note in a lease value (LeaseRole.note), '' when it has none. */
export function leaseNote(value: string | undefined): string {
  const at = value?.indexOf('\n') ?? -1;
  return at < 0 ? '' : value!.slice(at + 1);
}

/**
 * TEST ONLY: the partition and pause tests (spec/reliability/partition.spec.ts, pause.spec.ts) set
 * HIVENODE_TEST_BROKEN_NO_LEASE_STOP=1, with HIVENODE_TEST_BROKEN_NO_FENCING=1, to build a holder
 * deliberately broken — the lease never stops its work: not when it runs out unrenewed, not when a
 * renewal is refused — and show that a holder cut off and healed, or frozen and resumed, then writes
 * beside the new one. Without this switch the struck holder stops at its lease's end or its first
 * refused renewal, often before it writes again, so the fence would seldom be what the test sees;
 * nothing else may set it.
 */
const LEASE_STOPS = process.env.HIVENODE_TEST_BROKEN_NO_LEASE_STOP !== '1';

export class Lease {
  /** Who this instance is, as the lease names its holder (host, process, a random part per start). */
  readonly holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  /** The lease's revision while this poller holds it. */
  private revision: number | undefined;
  private validUntil = 0;
  /** A follower's view: the holder's last revision, its name, and when this poller first saw it. */
  private seen: { revision: number; since: number; holder: string } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stepping: Promise<void> = Promise.resolve();
  private unreachable = false;
  private unwatch: (() => void) | undefined;

  constructor(
    private readonly bucket: SharedBucket,
    private readonly key: string,
    readonly ttlMs: number,
    private readonly log: Logger,
    private readonly role: LeaseRole = { name: 'poller' },
  ) {}

  /** The lease's value: the holder's name, and its note on the next line. */
  private value(): string {
    return this.role.note ? `${this.holder}\n${this.role.note()}` : this.holder;
  }

  /** Whether this instance holds the lease now (a poller may poll, a queue may deliver). */
  holds(): boolean {
    return this.revision !== undefined && Date.now() < this.validUntil;
  }

  /** Takes part in the election until stop(): tries once now, then every third of the lease. */
  async start(): Promise<void> {
    await this.step();
    const every = Math.max(100, Math.floor(this.ttlMs / 3));
    this.timer = setInterval(() => {
      this.expire();
      this.stepSoon();
    }, every);
    // a holder that stops removes the lease: a follower told so contends at once, not at its next poll
    this.unwatch = this.bucket.onRemoved?.(this.key, () => {
      if (this.revision === undefined) this.stepSoon();
    });
  }

  /**
   * A holder whose renewals did not get through for a whole lease (its bucket unreachable: cut off from
   * the network, or the process was paused) has lost it, whether or not another instance took it yet:
   * it stops its work now — a queue holder cut off would otherwise go on delivering entries whose
   * outcomes it can no longer store, and the next holder would deliver them again. Checked on the
   * timer, not after a renewal, which may itself wait for its timeout.
   */
  private expire(): void {
    if (LEASE_STOPS && this.revision !== undefined && Date.now() >= this.validUntil)
      this.lost(`its lease ran out: not renewed for ${this.ttlMs} ms`);
  }

  private stepSoon(): void {
    this.stepping = this.stepping.then(() => this.step());
  }

  /** Gives the lease up (another poller takes it over at once) and stops taking part. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.unwatch?.();
    await this.stepping;
    const revision = this.revision;
    this.revision = undefined;
    if (revision !== undefined) await this.bucket.remove(this.key, revision).catch(() => undefined);
    if (revision !== undefined) this.role.onChange?.(false, undefined);
  }

  /** Called when a write shows that another poller recorded work after this one: it is no longer the holder. */
  lost(reason: string): void {
    if (this.revision === undefined) return;
    this.revision = undefined;
    this.seen = undefined;
    this.log.warn(`no longer the active ${this.role.name}: ${reason}`);
    this.role.onChange?.(false, undefined);
  }

  private async step(): Promise<void> {
    const sent = Date.now();
    try {
      if (this.revision !== undefined) {
        const held = this.revision;
        const next = await this.bucket.update(this.key, this.value(), held);
        // ran out while the renewal was on its way (expire): the work has stopped; the lease it wrote
        // is left to run out, and this instance contends again like any other
        if (this.revision !== held) return;
        if (next !== undefined) this.renewed(next, sent);
        else if (LEASE_STOPS) this.lost(`another ${this.role.name} took the lease over`);
      } else {
        await this.contend(sent);
      }
      if (this.unreachable) this.log.info(`the ${this.role.name} lease bucket answers again`);
      this.unreachable = false;
    } catch (e) {
      if (!this.unreachable)
        this.log.warn(
          `the ${this.role.name} lease bucket does not answer (${describeError(e)}); ${this.revision !== undefined ? 'the work stops when the lease runs out' : 'retrying'}`,
        );
      this.unreachable = true;
    }
  }

  private async contend(now: number): Promise<void> {
    const current = await this.bucket.get(this.key);
    if (!current) {
      // given up (a holder that stopped): whoever holds it next did not take it from a dead one
      this.seen = undefined;
      const revision = await this.bucket.create(this.key, this.value());
      if (revision !== undefined) this.acquired(revision, now, `no ${this.role.name} held the lease`, undefined);
      return;
    }
    const holder = current.value.split('\n')[0]!;
    if (this.seen?.revision !== current.revision) {
      // another instance took over from a holder this one saw (a renewal keeps the holder's name)
      if (this.seen && this.seen.holder !== holder) this.takeoverSeen(this.seen.since);
      this.seen = { revision: current.revision, since: now, holder };
      return;
    }
    if (now - this.seen.since < this.ttlMs) return;
    const revision = await this.bucket.update(this.key, this.value(), current.revision);
    if (revision === undefined) return;
    this.takeoverSeen(this.seen.since);
    this.acquired(revision, now, `${holder} did not renew it for ${this.ttlMs} ms`, current.value);
  }

  /**
   * A holder last seen (its last revision first read at `since`) was replaced without giving the
   * lease up. It wrote that revision within a third of a lease before `since` (the poll period), so
   * it was dead within a third of a lease after `since`, or it would have renewed; the next holder
   * saw the same revision at most a third of a lease before this instance did and waited a whole
   * lease, so it held nothing before `since` + 2/3 lease. Half a lease after `since` lies between.
   */
  private takeoverSeen(since: number): void {
    this.role.onHolderDead?.(since + this.ttlMs / 2);
  }

  private acquired(revision: number, sent: number, why: string, previous: string | undefined): void {
    this.renewed(revision, sent);
    this.seen = undefined;
    this.log.info(`active ${this.role.name} now (${why}); lease ${this.ttlMs} ms held as ${this.holder}`);
    this.role.onChange?.(true, previous);
  }

  private renewed(revision: number, sent: number): void {
    this.revision = revision;
    this.validUntil = sent + this.ttlMs;
  }
}
