/**
 * What a reload changes (docs/ARCHITECTURE.md, Reloading a node): the running services and the
 * newly compiled ones compared by NAME, each changed one with the names of its changed parameters
 * (never their values: some are secrets), and what a reload must refuse instead of applying.
 */
import type { PlannedService } from './node-plan.js';
import { hiveKey } from './node-plan.js';

/** A running service as the diff sees it. */
export interface RunningEntry {
  name: string;
  kind: string;
  config: Readonly<Record<string, unknown>>;
}

interface ServiceChange {
  name: string;
  kind: string;
  /** Names of the parameters whose compiled value changed ('service' when the kind did). */
  params: string[];
}

export interface ReloadDiff {
  added: string[];
  removed: string[];
  changed: ServiceChange[];
  unchanged: string[];
}

/** The hive section's parameters: how a node reaches its hive, which a reload cannot change. */
export const HIVE_PARAMS = ['SERVERHOST', 'SERVERAUTH', 'SERVERCA', 'SERVERCERT', 'SERVERKEY'] as const;

/**
 * Kinds whose instance holds a store no second instance may open (a SQLite file with its lock, a
 * JetStream queue's holder): a changed one is swapped in place, the old one drained and its store
 * closed before the new one opens it, not started beside it.
 */
const STORE_KINDS: ReadonlySet<string> = new Set(['queue', 'flow']);

const holdsStore = (kind: string): boolean => STORE_KINDS.has(kind);

/**
 * Kinds swapped in place on a reload: those holding a store, and the syslog receiver, whose UDP, TCP
 * and RELP ports a second instance could not open beside it (the gateway hands its socket over instead).
 */
export const swapsInPlace = (kind: string): boolean => holdsStore(kind) || kind === 'syslog';

const same = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a) === JSON.stringify(b);

export function diffServices(running: readonly RunningEntry[], next: readonly PlannedService[]): ReloadDiff {
  const byName = new Map(running.map((s) => [s.name, s]));
  const nextNames = new Set(next.map((s) => s.name));
  const diff: ReloadDiff = {
    added: [],
    removed: running.filter((s) => !nextNames.has(s.name)).map((s) => s.name),
    changed: [],
    unchanged: [],
  };
  for (const s of next) {
    const old = byName.get(s.name);
    if (!old) {
      diff.added.push(s.name);
      continue;
    }
    const kind = s.service.info.kind;
    if (old.kind !== kind) {
      diff.changed.push({ name: s.name, kind, params: ['service'] });
      continue;
    }
    const keys = new Set([...Object.keys(old.config), ...Object.keys(s.service.values)]);
    const params = [...keys].filter((k) => !same(old.config[k], s.service.values[k]));
    if (params.length === 0) diff.unchanged.push(s.name);
    else diff.changed.push({ name: s.name, kind, params });
  }
  return diff;
}

/** The diff in one line: `added audit; removed old; changed echo (Delay, ReplyCode)`, or `nothing changed`. */
export function describeDiff(d: ReloadDiff): string {
  const parts = [
    d.added.length ? `added ${d.added.join(', ')}` : '',
    d.removed.length ? `removed ${d.removed.join(', ')}` : '',
    d.changed.length ? `changed ${d.changed.map((c) => `${c.name} (${c.params.join(', ')})`).join(', ')}` : '',
  ].filter((p) => p !== '');
  return parts.length ? parts.join('; ') : 'nothing changed';
}

/**
 * Why the new services cannot be applied to the running ones, or undefined: the hive section
 * changed, a queue or flow's store moved, or an in-memory one would lose what it holds.
 */
export function refusal(
  running: readonly RunningEntry[],
  next: readonly PlannedService[],
  diff: ReloadDiff,
  hive: Readonly<Record<string, unknown>>,
): string | undefined {
  for (const s of next) {
    const values = s.service.values;
    const changed = HIVE_PARAMS.find((k) =>
      k === 'SERVERHOST'
        ? hiveKey(String(values[k] ?? '')) !== hiveKey(String(hive[k] ?? ''))
        : String(values[k] ?? '') !== String(hive[k] ?? ''),
    );
    if (changed)
      return `the hive section is not reloadable (${changed} changed${s.where ? ` for ${s.where}` : ''}); restart the node to apply it`;
  }
  const byName = new Map(running.map((s) => [s.name, s]));
  for (const c of diff.changed) {
    const old = byName.get(c.name)!;
    if (!holdsStore(old.kind) || c.params.includes('service')) continue;
    for (const param of ['PersistPath', 'Store'] as const) {
      if (!c.params.includes(param)) continue;
      const now = next.find((s) => s.name === c.name)!.service.values[param];
      return `${old.kind} '${c.name}': ${param} changed ('${String(old.config[param])}' → '${String(now)}'): a reload does not move a store; move the store first (stop the node, move ${old.config.PersistPath ? `${String(old.config.PersistPath)}/${c.name}` : 'its entries'} there, start it with the new file)`;
    }
    if (old.config.Store !== 'jetstream' && old.config.PersistPath === '') {
      return `${old.kind} '${c.name}' keeps its ${old.kind === 'flow' ? 'runs' : 'entries'} in memory (PersistPath is empty): restarting it with the change would lose them; give it a PersistPath, or restart the node to apply the change`;
    }
  }
  return undefined;
}
