/**
 * Which Durability a queue on JetStream runs with (README, Durability of the queue on JetStream): the
 * level asked for (or the default), checked at start against what the servers show a client — the
 * version in their INFO and the stream's configuration — and refused in one line where it cannot hold.
 */
import { ConfigError } from '../../protocol/errors.js';

export const Durability = { Replicated: 'replicated', Fsync: 'fsync', Journal: 'journal' } as const;
export type Durability = (typeof Durability)[keyof typeof Durability];

/**
 * How often a nats-server fsyncs its file store in the background when not told otherwise: 60 s up
 * to 2.9 (a constant of the server, no option), 2 min from 2.10 (its sync_interval option's default).
 */
const SYNC_INTERVAL_2_9_MS = 60_000;
const SYNC_INTERVAL_2_10_MS = 120_000;
/**
 * How long after its acknowledgement a record of a replicated stream can still be lost by a power cut
 * of every server, beyond the sync interval: the stream's Raft group is restored from its last snapshot
 * and log, which are not fsynced with each write either. Measured on Debian's nats-server 2.9.10, three
 * servers, R3, on the power-cut filesystem (spec/support/lazyfs.ts): 100 records acknowledged 90 s
 * before the cut were all lost, 100 acknowledged 200 s before it all kept. The journal holds a record
 * the sync interval plus this (240 s on 2.9, 300 s from 2.10, where the same Raft horizon is assumed).
 */
const RAFT_HORIZON_MS = 180_000;

/** What the servers show a client: the version in INFO, and the stream's persist_mode (absent before 2.12). */
export interface ServerFacts {
  version: string;
  persistMode?: string;
}

/** The level in force, the journal's hold where there is one, and why (for the start log and the status). */
export interface DurabilityChoice {
  level: Durability;
  /** journal: how long a record stays in the journal after JetStream acknowledged it. */
  holdMs: number;
  why: string;
}

/** [major, minor] of a version such as 2.9.10 or v2.10.4-beta; [0, 0] when unreadable. */
function majorMinor(version: string): [number, number] {
  const m = /(\d+)\.(\d+)/.exec(version);
  return m ? [Number(m[1]), Number(m[2])] : [0, 0];
}

function atLeast210(version: string): boolean {
  const [major, minor] = majorMinor(version);
  return major > 2 || (major === 2 && minor >= 10);
}

/** The servers' background sync interval when left at its default, by their version. */
function syncIntervalMs(version: string): number {
  return atLeast210(version) ? SYNC_INTERVAL_2_10_MS : SYNC_INTERVAL_2_9_MS;
}

/**
 * A warning for servers that lost acknowledged entries of a replicated stream when one of them was cut
 * off from the others and healed (2.9.10 in the partition row of RELIABILITY.md; 2.10.27 held them in
 * the same run), or undefined. A client can do nothing about it but say so.
 */
export function partitionWarning(version: string, replicas: number): string | undefined {
  if (replicas < 3 || atLeast210(version)) return undefined;
  return `nats-server ${version} lost acknowledged entries of a replicated stream when a server was cut off and healed (RELIABILITY.md, the partition row); run nats-server 2.10 or later`;
}

/**
 * The level for `asked` ('' = the default) on servers showing `facts`. `fsync` needs a server that can
 * fsync before acknowledging (2.10 and later, sync_interval: always) and a stream not written in
 * persist_mode async; sync_interval itself is server configuration no client can read, so `fsync` is
 * the operator's word for it and the default stays `journal`, which holds either way.
 */
export function chooseDurability(asked: string, facts: ServerFacts): DurabilityChoice {
  const interval = syncIntervalMs(facts.version);
  const holdMs = interval + RAFT_HORIZON_MS;
  const seconds = `${interval / 1000} s`;
  if (asked === Durability.Fsync) {
    if (!atLeast210(facts.version)) {
      throw new ConfigError(
        `Durability fsync: nats-server ${facts.version} fsyncs its store only every ${seconds} in the background and cannot fsync before acknowledging (sync_interval: always needs nats-server 2.10 or later); upgrade the servers, or give Durability journal`,
      );
    }
    if (facts.persistMode === 'async') {
      throw new ConfigError(
        "Durability fsync: the queue's stream is configured persist_mode: async, which acknowledges before writing; remove persist_mode from the stream, or give Durability journal",
      );
    }
    return {
      level: Durability.Fsync,
      holdMs: 0,
      why: `asked for; nats-server ${facts.version} must run with sync_interval: always (a client cannot see it)`,
    };
  }
  if (asked === Durability.Replicated) {
    return {
      level: Durability.Replicated,
      holdMs: 0,
      why: `asked for: a power cut of every server can lose what they acknowledged in the last ${holdMs / 1000} s (nats-server ${facts.version} fsyncs every ${seconds}, its Raft state later)`,
    };
  }
  const reason = atLeast210(facts.version)
    ? `nats-server ${facts.version}: a client cannot see whether the servers run sync_interval: always (give Durability fsync if they do)`
    : `nats-server ${facts.version} fsyncs only every ${seconds} and cannot fsync before acknowledging`;
  return {
    level: Durability.Journal,
    holdMs,
    why: `${asked === Durability.Journal ? 'asked for' : 'the default'}; ${reason}; records stay in the journal ${holdMs / 1000} s after JetStream acknowledged them`,
  };
}
