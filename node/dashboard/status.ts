/**
 * The status of a node as one JSON document: what the dashboard page, `/api/status` and
 * `hivenode status` all show — services, the actor tree with restart counts and last crashes,
 * mailbox sizes, service figures (queue state, in-flight, ...), and the latest journal lines.
 */
import type { ActorInfo } from '../../supervisors/runtime.js';
import type { ActorTotals, JournalEntry } from '../../supervisors/journal.js';

export interface ActorNode extends ActorInfo, ActorTotals {
  children: ActorNode[];
}

export interface NodeStatus {
  node: { name: string; pid: number; version: string; startedAt: string; uptimeSeconds: number; rssBytes: number };
  hive: Record<string, unknown>;
  services: Array<{ kind: string; name: string; release: string; channel: string; status: Record<string, unknown> }>;
  actors: ActorNode[];
  journal: JournalEntry[];
  /** The node file it runs: its text's hash, when it was last applied, how many reloads applied. */
  source?: { file: string; hash: string; appliedAt: string; reloads: number };
}

/** Nests actors by path: `/node/q/queue` under `/node/q` under `/node`. */
export function actorTree(actors: Array<ActorInfo & ActorTotals>): ActorNode[] {
  const byPath = new Map<string, ActorNode>();
  for (const a of actors) byPath.set(a.path, { ...a, children: [] });
  const roots: ActorNode[] = [];
  for (const a of byPath.values()) {
    const parent = byPath.get(a.parent);
    if (parent) parent.children.push(a);
    else roots.push(a);
  }
  return roots;
}

/** Renders the tree as indented text lines (for `hivenode status`). */
export function treeLines(nodes: ActorNode[], depth = 0): string[] {
  const lines: string[] = [];
  for (const n of nodes) {
    const crash = n.lastCrash ? `  last crash ${n.lastCrash.time} ${n.lastCrash.class}: ${n.lastCrash.message}` : '';
    lines.push(
      `${'  '.repeat(depth)}${n.name.padEnd(Math.max(1, 28 - depth * 2))} mailbox ${String(n.mailbox).padStart(5)}  restarts ${String(n.restarts).padStart(3)}${n.stopped ? '  STOPPED' : ''}${crash}`,
    );
    lines.push(...treeLines(n.children, depth + 1));
  }
  return lines;
}
