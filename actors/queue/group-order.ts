/**
 * Strict order per group (README, Strict order per group): with GroupBy and `GroupOrder: strict`,
 * a group delivers one entry at a time in arrival order, and while an entry of the group is
 * retrying the later ones wait; a dead entry holds its group until it is replayed or purged.
 * `GroupOrder: skip-dead` holds the group while an entry retries but lets it go on once the entry
 * is dead. The holds are counted here per group (groups.ts asks before it lists a group): by entry
 * key for the entries in memory (retrying, dead and not yet moved to the dead set), by count for
 * the dead set, which lives in the store only (kept.ts) and is counted from there at load and after
 * a replay or purge.
 */
import { ConfigError } from '../../protocol/errors.js';

export const GroupOrder = { Strict: 'strict', SkipDead: 'skip-dead' } as const;
export type GroupOrder = (typeof GroupOrder)[keyof typeof GroupOrder];

/** GroupOrder checked at start against the other group parameters; undefined when off. */
export function groupOrderOf(config: {
  GroupOrder: string;
  GroupBy: string;
  GroupConcurrency: number;
}): GroupOrder | undefined {
  const order = config.GroupOrder.trim();
  if (order === '') return undefined;
  if (config.GroupBy.trim() === '')
    throw new ConfigError(
      `GroupOrder ${order} keeps the order of each group, but GroupBy is empty; expected GroupBy to name an entry attribute (channel, mode, class, operation) or a Data field`,
    );
  if (config.GroupConcurrency > 1)
    throw new ConfigError(
      `GroupOrder ${order} delivers one entry of a group at a time, but GroupConcurrency is ${config.GroupConcurrency}; set GroupConcurrency to 0 or 1`,
    );
  return order as GroupOrder;
}

export class GroupHolds {
  /** Entry key → its group, for the entries in memory that hold their group. */
  private readonly byEntry = new Map<string, { group: string; dead: boolean }>();
  /** Group → how many entries in memory hold it. */
  private readonly held = new Map<string, number>();
  /** Group → dead entries of it in the dead set (strict only). */
  private deadKept = new Map<string, number>();

  constructor(readonly order: GroupOrder) {}

  /** Whether the group waits: an entry of it retries, or (strict) is dead. */
  holds(group: string): boolean {
    return (this.held.get(group) ?? 0) > 0 || (this.deadKept.get(group) ?? 0) > 0;
  }

  /** An entry of `group` failed: retrying, or dead (which holds only with strict). */
  failed(key: string, group: string, dead: boolean): void {
    this.release(key);
    if (dead && this.order === GroupOrder.SkipDead) return;
    this.byEntry.set(key, { group, dead });
    this.held.set(group, (this.held.get(group) ?? 0) + 1);
  }

  /** The entry no longer holds its group (due again, delivered, deleted, replayed, dropped); its group if it held one. */
  release(key: string): string | undefined {
    const hold = this.byEntry.get(key);
    if (!hold) return undefined;
    this.byEntry.delete(key);
    const n = (this.held.get(hold.group) ?? 1) - 1;
    if (n > 0) this.held.set(hold.group, n);
    else this.held.delete(hold.group);
    return hold.group;
  }

  /** A dead entry moved from memory to the dead set: it holds its group from there. */
  kept(key: string): void {
    const group = this.release(key);
    if (group !== undefined) this.deadKept.set(group, (this.deadKept.get(group) ?? 0) + 1);
  }

  /** The dead set's entries per group, counted in the store (strict only: skip-dead is not held by them). */
  setDeadKept(counts: Map<string, number>): void {
    this.deadKept = this.order === GroupOrder.Strict ? counts : new Map();
  }

  /** The keys of the entries in memory holding a group (to drop those gone after a purge or replay). */
  keys(): string[] {
    return [...this.byEntry.keys()];
  }

  clear(): void {
    this.byEntry.clear();
    this.held.clear();
  }
}
