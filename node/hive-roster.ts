/**
 * Every node that shares a NATS hive, for the console: each node writes a short summary of itself
 * (name, host, pid, its services with their channels, the channels each sends to and how many it
 * has sent on each, its console port) every few seconds into one
 * key of the hive's JetStream KV bucket hivenode_nodes, by compare-and-set (a lost race is tried
 * again), and drops the entries of nodes not heard from for three rounds. No extra server: the
 * bucket lives in the NATS servers the hive already uses. On the embedded hive the node is alone.
 * A hive that refuses the bucket (no JetStream) leaves the roster at this node, logged once.
 */
import { hostname } from 'node:os';
import type { HiveClient } from '../actors/hive/client.js';
import type { SharedBucket } from '../actors/hive/transport.js';
import type { Logger } from '../actors/observe/logger.js';
import { describeError } from '../protocol/errors.js';
import type { SentByChannel } from './sent-counts.js';
import type { ChannelSend } from './wiring.js';
import { sendCounts } from './wiring.js';

export const ROSTER_BUCKET = 'hivenode_nodes';
const KEY = 'nodes';
const TRIES = 3;

export interface RosterEntry {
  name: string;
  host: string;
  pid: number;
  startedAt: string;
  /** When it last wrote its entry (RFC 3339). */
  seenAt: string;
  consolePort?: number;
  services: RosterService[];
  /** Marks this node's own entry in nodes() (never written to the bucket). */
  self?: true;
}

/** A service of a node as the roster carries it: with the channels it sends to and how many it has sent on each (other nodes draw its arrows with their rates). */
export interface RosterService {
  name: string;
  kind: string;
  channel: string;
  sends?: Array<ChannelSend & { sent: number }>;
}

/** A node's one entry in the bucket: name, host and process. */
export const idOf = (e: Pick<RosterEntry, 'name' | 'host' | 'pid'>): string => `${e.name}@${e.host}#${e.pid}`;

/** A service's roster entry from its wiring, its sent counters and (for the sends it counts itself) its status. */
export function rosterService(
  s: {
    name: string;
    kind: string;
    channel: string;
    config: Readonly<Record<string, unknown>>;
    status: () => Readonly<Record<string, unknown>>;
  },
  sent: SentByChannel,
): RosterService {
  return {
    name: s.name,
    kind: s.kind,
    channel: s.channel,
    sends: sendCounts(s.kind, s.config, (channel) => sent.get(channel)?.n ?? 0, s.status),
  };
}

export class HiveRoster {
  private timer: NodeJS.Timeout | undefined;
  private bucket: Promise<SharedBucket | undefined> | undefined;
  private others: RosterEntry[] = [];
  private writing = false;

  constructor(
    private readonly hive: HiveClient,
    private readonly self: () => Omit<RosterEntry, 'seenAt' | 'host' | 'pid'>,
    private readonly log: Logger,
    readonly intervalMs = 5_000,
  ) {}

  private entry(): RosterEntry {
    return { ...this.self(), host: hostname(), pid: process.pid, seenAt: new Date().toISOString() };
  }

  /** Starts writing on a NATS hive (nothing to do on the embedded one). */
  start(): void {
    const opening = this.hive.sharedBucket(ROSTER_BUCKET);
    if (!opening) return;
    this.bucket = opening.catch((e: unknown) => {
      this.log.info(
        `the console shows this node only: the NATS hive refused the KV bucket ${ROSTER_BUCKET} (${describeError(e)}); enable JetStream to see every node`,
      );
      return undefined;
    });
    void this.round();
    this.timer = setInterval(() => void this.round(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Every node known: this one (always current) and the others from the last round, by name. */
  nodes(): RosterEntry[] {
    return [{ ...this.entry(), self: true as const }, ...this.others].sort(
      (a, b) => a.name.localeCompare(b.name) || a.host.localeCompare(b.host) || a.pid - b.pid,
    );
  }

  /** One write of this node's entry, dropping entries older than three rounds; a lost race is tried again. */
  async round(): Promise<void> {
    const bucket = await this.bucket;
    if (!bucket || this.writing) return;
    this.writing = true;
    try {
      for (let i = 0; i < TRIES; i++) {
        const current = await bucket.get(KEY);
        const all = current ? (JSON.parse(current.value) as Record<string, RosterEntry>) : {};
        const mine = this.entry();
        const fresh = Date.now() - 3 * this.intervalMs;
        const kept = Object.fromEntries(
          Object.entries(all).filter(([id, e]) => id !== idOf(mine) && Date.parse(e.seenAt) >= fresh),
        );
        const next = JSON.stringify({ ...kept, [idOf(mine)]: mine });
        const written = current ? await bucket.update(KEY, next, current.revision) : await bucket.create(KEY, next);
        if (written !== undefined) {
          this.others = Object.values(kept);
          return;
        }
      }
    } catch (e) {
      this.log.debug(`writing this node into the hive's roster failed: ${describeError(e)}`);
    } finally {
      this.writing = false;
    }
  }
}
