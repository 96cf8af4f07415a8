/**
 * What the console reads from its node: the status snapshot, the request counters, the journal, the
 * hive (queue commands go over it, as any caller's would) and each service's wiring. An interface
 * of its own so the console does not import the node (the node starts the console).
 */
import type { HiveClient } from '../../actors/hive/client.js';
import type { Logger } from '../../actors/observe/logger.js';
import type { Journal } from '../../supervisors/journal.js';
import type { NodeMetrics } from '../dashboard/metrics.js';
import type { NodeStatus } from '../dashboard/status.js';
import type { RosterEntry } from '../hive-roster.js';
import type { SentByChannel } from '../sent-counts.js';
import type { ReloadDiff } from '../reload-diff.js';
import type { DiffLine } from '../line-diff.js';
import type { KeptVersion } from '../node-file-versions.js';

/** A service as the console draws and addresses it. */
export interface ConsoleService {
  kind: string;
  name: string;
  /** The channel it listens on ('' for a gateway, which listens on HTTP). */
  channel: string;
  /** Its compiled parameters (the flow reads the wiring ones: OUTPUTCHANNEL, DefaultChannel, Routes, …). */
  config: Readonly<Record<string, unknown>>;
  status(): Record<string, unknown>;
}

/** An actor's supervision totals (restarts, crashes) and whether it stopped. */
interface ActorTotalsView {
  path: string;
  restarts: number;
  crashes: number;
  stopped: boolean;
}

export interface ConsoleSources {
  status(): NodeStatus;
  /** Every node sharing the hive (this one alone on the embedded hive). */
  nodes(): RosterEntry[];
  /** Every actor's totals, without the rest of the status (sampled every few seconds). */
  actorTotals(): ActorTotalsView[];
  services(): readonly ConsoleService[];
  /** What a service of this node has sent on each channel since start (node/sent-counts.ts). */
  sent(service: string): SentByChannel;
  /** The node file and its reloads (the Config page); undefined for a node not run from a file. */
  config(): ConsoleConfig | undefined;
  metrics: NodeMetrics;
  hive: HiveClient;
  journal: Journal;
  log: Logger;
}

/** A node file's text checked as a reload would compile it (a dry run): every error one line, or what it would change. */
export interface ConfigCheck {
  ok: boolean;
  /** Every error, one line each naming where it is written. */
  errors: string[];
  /** What it would change, by service (absent when it does not compile). */
  diff?: ReloadDiff;
  summary?: string;
  /** The running file against this one, line by line (secrets masked on both sides). */
  lines: DiffLine[];
}

/** What an apply, a restore or a reload from disk did: applied with its diff, or refused with why (one line per error). */
export type ConfigOutcome =
  | { applied: true; summary: string; diff: ReloadDiff; hash: string }
  | { applied: false; reason: string; conflict?: boolean };

/** The running node file as the Config page sees it (node/node-file-control.ts). */
export interface ConsoleConfig {
  /** The node file's path. */
  readonly file: string;
  /** The running text with its secrets masked, its hash, and whether the file on disk now differs from it. */
  running(): Promise<{ text: string; hash: string; diskChanged: boolean }>;
  versions(): KeptVersion[];
  /** Kept version `n` with its secrets masked. */
  version(n: number): Promise<string>;
  dryRun(text: string): Promise<ConfigCheck>;
  /** Applies an edited text (masks kept: node-file-secrets.ts) by `who`; `base`, when given, must be the running hash (else refused as a conflict). */
  apply(text: string, who: string, base?: string): Promise<ConfigOutcome>;
  /** Applies kept version `n` through the same path. */
  restore(n: number, who: string): Promise<ConfigOutcome>;
  /** Re-reads the file from disk, as SIGHUP does. */
  reloadFromDisk(who: string): Promise<ConfigOutcome>;
}
