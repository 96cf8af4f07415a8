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
  metrics: NodeMetrics;
  hive: HiveClient;
  journal: Journal;
  log: Logger;
}
