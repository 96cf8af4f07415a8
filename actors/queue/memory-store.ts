/**
 * The queue's store without persistence (PersistPath ''): entries live in the queue actor only; what
 * must still be readable — kept entries (fetch, list, replay) and schedules — is held here.
 */
import type { Logger } from '../observe/logger.js';
import type { KeptState } from './kept.js';
import { MemoryKept } from './memory-kept.js';
import type { QueueStore, ScheduleRow, SeenRow, StoreOp } from './store.js';

/** PersistPath '' keeps entries in memory only (warned at start); schedules outlive a restart of the queue actor, not of the process. */
export class MemoryStore implements QueueStore {
  readonly durable = false;
  private readonly schedules = new Map<string, string>();
  /** Kept entries must be readable (fetch, list, replay), so they are held here, bounded by `capacity`. */
  readonly kept: MemoryKept;
  constructor(
    capacity = Number.MAX_SAFE_INTEGER,
    log?: Logger,
    onEvicted: (state: KeptState) => void = () => undefined,
  ) {
    this.kept = new MemoryKept(capacity, log, onEvicted);
  }
  async load(): Promise<Map<string, string>> {
    return new Map();
  }
  async loadSeen(): Promise<SeenRow[]> {
    return [];
  }
  async loadSchedules(): Promise<ScheduleRow[]> {
    return [...this.schedules].map(([name, doc]) => ({ name, doc }));
  }
  async write(ops: StoreOp[]): Promise<void> {
    for (const op of ops) {
      if (op.type === 'put-schedule') this.schedules.set(op.name, op.doc);
      else if (op.type === 'remove-schedule') this.schedules.delete(op.name);
      else if (op.type === 'keep' || op.type === 'unkeep') this.kept.apply(op);
    }
  }
  async close(): Promise<void> {}
}
