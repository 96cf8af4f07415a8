/**
 * A queue on JetStream (Store jetstream) shared by the nodes that run a queue of the same NAME on
 * one NATS hive — and a flow the same way (README, Flows: its runs live where queue entries live):
 * what is said here of a queue and its entries holds for a flow and its runs in progress. The
 * entries live in the hive (a stream with Replicas copies, written by
 * jetstream-store.ts); one node at a time holds the queue: it holds a lease in the bucket
 * hivenode_queues (actors/hive/lease.ts), loads the stream and serves the queue's channel —
 * enqueues and commands sent from any node reach it through the hive, and it delivers. The other
 * nodes stand by, not listening, and take over within two lease periods when the holder dies
 * (at once when it stops). Meanwhile every node of the NAME holds the queue's channel on its
 * transport (ChannelHold), so its requests wait for the next holder instead of finding nobody (404)
 * (docs/ARCHITECTURE.md, The queue on JetStream). Two holders never write at once: every write of the store expects the
 * stream's last record to be its own (a fenced append), so a node that lost the queue without
 * knowing (cut off, paused) has its next write refused and steps down.
 *
 * The holder names, with each renewal of its lease, the entries it is delivering; the node taking
 * over holds those back until AckWait has passed since that report (their delivery may still be
 * running at the target), as JetStream's AckWait holds back an unacknowledged message.
 */
import { ConfigError, describeError } from '../../protocol/errors.js';
import type { ParentRef } from '../../supervisors/runtime.js';
import type { ChannelHold, SharedBucket, SharedLog } from '../hive/transport.js';
import { sharedNameWord } from '../hive/transport.js';
import type { RunningService, ServiceContext } from '../service/context.js';
import { Lease, leaseNote } from '../hive/lease.js';
import { join } from 'node:path';
import { JetStreamStore, SNAPSHOT } from './jetstream-store.js';
import type { DurabilityChoice } from './durability.js';
import { Durability, chooseDurability, partitionWarning } from './durability.js';
import { LogJournal } from './jetstream-journal.js';
import { JournaledLog } from './journaled-log.js';

/** The bucket of the holders' leases (a queue's key holder.<NAME>, a flow's flow.<NAME>). */
const HOLDERS_BUCKET = 'hivenode_queues';
/** The holder's lease: renewed every third of it; a dead holder is replaced within two of them. */
export const HOLDER_LEASE_MS = 6_000;
/** How long a holder that steps down lets its deliveries finish. */
const STEP_DOWN_MS = 5_000;
/** How often a standby starting asks whether a node serves the queue yet. */
const SERVED_POLL_MS = 100;

/** Entries the previous holder was delivering, and until when they wait. */
export interface HeldEntries {
  keys: readonly string[];
  until: number;
}

/** A queue or flow started on a store: its service and the keys it is delivering (a queue's entries, a flow's runs with a step under way). */
export interface HeldService {
  service: RunningService;
  inFlight: Iterable<string>;
}

/** Runs the service's actors under `parent` on an open store (queue.ts, flow.ts). */
type RunHeld = (parent: ParentRef, store: JetStreamStore, held: HeldEntries | undefined) => Promise<HeldService>;

/** The parameters, of the same names in the queue's and the flow's tables, a service held on JetStream runs with. */
interface SharedStoreConfig {
  readonly Replicas: number;
  readonly Durability: string;
  readonly PersistPath: string;
  readonly AckWait: number;
  /** The queue's; a flow's stream has no limit. */
  readonly MaxStoreBytes?: number;
}

/** The kinds of service held this way: the word names the stream (HIVENODE_LOG_<kind>_<NAME>) and the log lines. */
type SharedKind = 'queue' | 'flow';

/** The lease's key of a service in the holders' bucket (the queue's as it always was). */
function leaseKey(kind: SharedKind, word: string): string {
  return kind === 'queue' ? `holder.${word}` : `${kind}.${word}`;
}

/** The replications a stream can have: a majority must survive the loss of a server. */
const REPLICAS = [1, 3, 5];

async function openShared<T>(opening: Promise<T> | undefined, what: string, kind: SharedKind): Promise<T> {
  if (!opening)
    throw new ConfigError(
      `Store jetstream keeps the ${kind === 'queue' ? "queue's entries" : "flow's runs"} in the NATS hive's JetStream: give SERVERHOST a nats:// address (on the embedded hive use Store sqlite)`,
    );
  try {
    return await opening;
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw new ConfigError(
      `Store jetstream: the NATS hive refused ${what} (${describeError(e)}); enable JetStream in the nats-server configuration (jetstream { store_dir: … })`,
    );
  }
}

/**
 * Opens the stream of a queue or flow and contends for it; serves it whenever this node holds it.
 * The flow reuses the queue's whole machinery (stream, Durability, lease, fencing, AckWait) by this.
 */
export async function holdShared<C extends SharedStoreConfig>(
  ctx: ServiceContext<C>,
  kind: SharedKind,
  run: RunHeld,
): Promise<RunningService> {
  const c = ctx.config;
  if (!REPLICAS.includes(c.Replicas))
    throw new ConfigError(
      `Replicas is ${c.Replicas}; give 1, 3 or 5 (a majority of the copies must answer each write)`,
    );
  const word = sharedNameWord(ctx.name);
  const log = await openShared(
    ctx.hive.sharedLog(`${kind}_${word}`, { replicas: c.Replicas, maxBytes: c.MaxStoreBytes ?? 0 }),
    `the stream of ${kind} '${ctx.name}'`,
    kind,
  );
  const durability = chooseDurability(c.Durability, log.servers ?? { version: '0.0.0' });
  let journaled: JournaledLog | undefined;
  if (durability.level === Durability.Journal) {
    if (c.PersistPath === '')
      throw new ConfigError(
        `Durability ${durability.level} keeps a journal of the ${kind}'s writes in PersistPath, which is empty: give PersistPath a local directory, or give Durability replicated`,
      );
    journaled = new JournaledLog(
      log,
      await LogJournal.open(
        join(c.PersistPath, ctx.name),
        log.identity ?? log.servers?.version ?? '',
        durability.holdMs,
        ctx.log,
      ),
      ctx.log,
      new Set([SNAPSHOT]),
    );
  } else if (ctx.explicit.has('PersistPath'))
    ctx.log.warn(
      `PersistPath is not used with Store jetstream and Durability ${durability.level}: the ${kind === 'queue' ? 'entries' : 'runs'} are kept in the NATS hive`,
    );
  ctx.log.info(`${kind} '${ctx.name}' Durability ${durability.level}: ${durability.why}`);
  const servers = partitionWarning(log.servers?.version ?? '0.0.0', c.Replicas);
  if (servers) ctx.log.warn(`${kind} '${ctx.name}': ${servers}`);
  const bucket = await openShared(ctx.hive.sharedBucket(HOLDERS_BUCKET), `the bucket ${HOLDERS_BUCKET}`, kind);
  const holder = new SharedHolder({ ctx, kind, log, run, durability, journaled }, bucket, word);
  try {
    await holder.start();
  } catch (e) {
    await journaled?.journal.close();
    throw e;
  }
  return holder;
}

class SharedHolder implements RunningService {
  private readonly lease: Lease;
  /** The queue's channel held on the hive (transport.ts, ChannelHold): while no node serves it, requests from this node wait for one. */
  private readonly hold: ChannelHold | undefined;
  /** Resolves once a node of the hive serves the queue (this one or another): the node is ready then. */
  ready: Promise<void> = Promise.resolve();
  private term: { held: HeldService; parent: ParentRef } | undefined;
  private terms = 0;
  /** Changes of holding run one after another. */
  private changing: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly where: string;
  private readonly unwatch: (() => void) | undefined;

  private readonly ctx: ServiceContext<SharedStoreConfig>;
  private readonly kind: SharedKind;
  private readonly log: SharedLog;
  private readonly run: RunHeld;
  private readonly durability: DurabilityChoice;
  /** Durability journal: the log through the node's journal (journaled-log.ts). */
  private readonly journaled: JournaledLog | undefined;

  constructor(
    parts: {
      ctx: ServiceContext<SharedStoreConfig>;
      kind: SharedKind;
      log: SharedLog;
      run: RunHeld;
      durability: DurabilityChoice;
      journaled: JournaledLog | undefined;
    },
    bucket: SharedBucket,
    /** The NAME as a word of the stream's name and the lease's key. */
    word: string,
  ) {
    ({
      ctx: this.ctx,
      kind: this.kind,
      log: this.log,
      run: this.run,
      durability: this.durability,
      journaled: this.journaled,
    } = parts);
    const { ctx, kind, log, journaled } = parts;
    // a NATS outage may have been a power cut of every server: what the journal keeps is published again
    this.unwatch = journaled ? log.onReconnect?.(() => this.recoverAfterOutage()) : undefined;
    this.where = `JetStream stream HIVENODE_LOG_${kind}_${word} (${ctx.config.Replicas} replica${ctx.config.Replicas === 1 ? '' : 's'})`;
    this.hold = ctx.hive.holdChannel(ctx.inputChannel);
    this.lease = new Lease(bucket, leaseKey(kind, word), HOLDER_LEASE_MS, ctx.log, {
      name: `${kind} holder`,
      note: () => JSON.stringify([...(this.term?.held.inFlight ?? [])]),
      onChange: (held, previous) =>
        this.change(held ? () => this.take(previous) : () => this.stepDown('it no longer holds the lease')),
      // requests this node sent to a holder that died get no answer: 503 now, not at their timeout
      onHolderDead: (sentBefore) => this.hold?.listenerGone(sentBefore),
    });
  }

  async start(): Promise<void> {
    await this.lease.start();
    await this.changing;
    if (this.term) return;
    this.ctx.log.info(`${this.kind} '${this.ctx.name}' standing by: another node holds it (${this.where})`);
    this.ready = this.awaitServed();
  }

  /**
   * Until a node serves the queue — the one holding the lease, which may still be loading the stream,
   * or this one after a takeover — the node is not ready: its health check answers 503 and its
   * gateway refuses with Retry-After, rather than letting a request find nobody on the channel.
   */
  private async awaitServed(): Promise<void> {
    const hold = this.hold;
    if (!hold) return;
    while (!this.stopped && !this.term && !(await hold.served()))
      await new Promise((r) => setTimeout(r, SERVED_POLL_MS));
    if (!this.stopped && !this.term) this.ctx.log.info(`${this.kind} '${this.ctx.name}' is served by another node`);
  }

  private recoverAfterOutage(): void {
    const journaled = this.journaled;
    if (!journaled || !this.term || this.stopped) return;
    journaled
      .recover()
      .catch((e: unknown) =>
        this.ctx.log.error(
          `${this.kind} '${this.ctx.name}': publishing the journal again after the outage failed (${describeError(e)}); the next write or takeover tries again`,
        ),
      );
  }

  private change(step: () => Promise<void>): void {
    this.changing = this.changing
      .then(step)
      .catch((e: unknown) => this.ctx.log.error(`${this.kind} holder: ${describeError(e)}`));
  }

  /** Starts serving the queue: a fresh store on the stream, the actors under a term actor of their own. */
  private async take(previous: string | undefined): Promise<void> {
    if (this.stopped || this.term) return;
    const n = ++this.terms;
    const parent = this.ctx.runtime.spawn<undefined, never>(this.ctx.supervisor, {
      name: `term-${n}`,
      init: () => undefined,
      receive: (s) => s,
    });
    const journal = this.journaled?.journal;
    const store = new JetStreamStore(this.journaled ?? this.log, this.ctx.log, this.where, {
      onFenced: () => this.change(() => this.stepDown(`another node wrote the ${this.kind}`)),
      ...(journal ? { beforePurge: () => journal.held() } : {}),
    });
    const held = heldEntries(previous, this.ctx.config.AckWait);
    try {
      // before the stream is read: what this node wrote and the stream lost (a power cut of every
      // server, this node's own restart) is put back first (docs/ARCHITECTURE.md, The journal)
      this.journaled?.newTerm();
      const recovered = await this.journaled?.recover();
      if (recovered && recovered.kept > 0)
        this.ctx.log.info(
          `${this.kind} '${this.ctx.name}' journal: ${recovered.kept} record(s) kept, ${recovered.republished} published again`,
        );
      this.term = { held: await this.run(parent, store, held), parent };
    } catch (e) {
      this.ctx.runtime.stop(parent);
      // a holder that cannot serve must not keep renewing the lease: another node takes over after it
      if (!this.stopped) this.lease.lost(`the ${this.kind} did not start here: ${describeError(e)}`);
      throw e;
    }
  }

  private async stepDown(why: string): Promise<void> {
    const term = this.term;
    if (!term) return;
    this.term = undefined;
    this.ctx.log.warn(`${this.kind} '${this.ctx.name}' stops serving: ${why}; standing by`);
    await term.held.service.drain(STEP_DOWN_MS);
    this.ctx.runtime.stop(term.parent);
    if (!this.stopped) this.lease.lost(why);
  }

  async drain(deadlineMs: number): Promise<void> {
    this.stopped = true;
    await this.changing;
    const term = this.term;
    this.term = undefined;
    if (term) await term.held.service.drain(deadlineMs);
    this.unwatch?.();
    await this.journaled?.journal.close();
    // given up after the store is closed: the next holder reads everything this one wrote
    await this.lease.stop();
    this.hold?.release();
  }

  status(): Record<string, unknown> {
    const store = this.where;
    const durability = { durability: this.durability.level, durabilityWhy: this.durability.why };
    if (this.term) return { ...this.term.held.service.status(), holder: 'this node', store, ...durability };
    return { channel: this.ctx.inputChannel, status: 'standing by', holder: 'another node', store, ...durability };
  }
}

/** The previous holder's report (its lease's note): the entries it was delivering, held until AckWait after it. */
function heldEntries(previous: string | undefined, ackWaitMs: number): HeldEntries | undefined {
  const note = leaseNote(previous);
  if (!note) return undefined;
  try {
    const keys = JSON.parse(note) as unknown;
    if (!Array.isArray(keys) || keys.length === 0) return undefined;
    // the lease was last renewed about a lease period before it was taken over
    return { keys: keys.map(String), until: Date.now() - HOLDER_LEASE_MS + ackWaitMs };
  } catch {
    return undefined;
  }
}
