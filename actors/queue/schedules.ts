/**
 * Cron schedules: the queue actor's schedules by name, their stored form, what a start
 * does about firings missed while the queue was down (`catchup`), and the one timer that wakes the
 * actor for the next firing (docs/ARCHITECTURE.md, The life of one queue entry). The firings
 * themselves are in schedule-firing.ts; everything here runs inside the queue actor, the timer
 * only tells it `schedule-due`.
 */
import { TooLargeError } from '../../protocol/errors.js';
import type { Message } from '../../protocol/message.js';
import { mapOf } from '../../protocol/message.js';
import type { Logger } from '../observe/logger.js';
import type { Cron } from './cron.js';
import { nextFiring, parseCron } from './cron.js';
import { MAX_TIMEOUT_MS } from './retry.js';
import type { ScheduleRequest } from './schedule-request.js';
import { Catchup, Overlap } from './schedule-request.js';
import type { ScheduleRow, StoreOp } from './store.js';
import { TimeZone } from './time-zone.js';

/** The stored form of a schedule (one JSON document per row of the `schedules` table). */
export interface ScheduleDoc {
  name: string;
  cron: string;
  tz: string;
  overlap: Overlap;
  catchup: Catchup;
  /** What a firing enqueues: Class, Operation, Data and the controls that are not the schedule's own. */
  message: Message;
  /** The next firing (epoch ms); NEVER when the expression names no later time. */
  nextAt: number;
  /** Keys of the entries this schedule made that may still be in the queue, oldest first (overlap looks at them). */
  liveKeys: string[];
  /** The key of the last entry a firing made ('' before the first). */
  lastEntryKey: string;
  /** When the schedule last made an entry (epoch ms; 0 before the first). */
  lastFiredAt: number;
  /** Entries made, and firings skipped by `overlap` (or refused by the queue: full, bad controls). */
  fired: number;
  skipped: number;
  createdAt: string;
}

/** A schedule with its expression and zone parsed. */
export interface Schedule {
  doc: ScheduleDoc;
  cron: Cron;
  zone: TimeZone;
}

/** nextAt of a schedule whose expression names no later time (JSON keeps it, unlike Infinity). */
export const NEVER = Number.MAX_SAFE_INTEGER;

/** The store write of a schedule's current state. */
export function putScheduleOp(doc: ScheduleDoc): StoreOp {
  return { type: 'put-schedule', name: doc.name, doc: JSON.stringify(doc) };
}

/** The firing after `after`, or NEVER. */
export function followingFiring(schedule: Schedule, after: number): number {
  return nextFiring(schedule.cron, schedule.zone, after) ?? NEVER;
}

/**
 * Most schedules one queue holds: each is a document in memory and in the store and a candidate at
 * every timer pass, and a client creating names in a loop must meet a clear refusal, not a slow queue.
 */
const MAX_SCHEDULES = 10_000;

export class ScheduleBook {
  private readonly byName = new Map<string, Schedule>();
  constructor(private readonly limit = MAX_SCHEDULES) {}
  private timer: NodeJS.Timeout | undefined;
  private timerAt = 0;
  /** Set when a schedule was added, removed or fired: the timer may need moving. */
  private changed = false;

  get size(): number {
    return this.byName.size;
  }

  get(name: string): Schedule | undefined {
    return this.byName.get(name);
  }

  /** Every schedule, by name. */
  list(): Schedule[] {
    return [...this.byName.values()].sort((a, b) => (a.doc.name < b.doc.name ? -1 : a.doc.name > b.doc.name ? 1 : 0));
  }

  /**
   * Adds a schedule, or replaces the one of that name (its counts and last entry carry over: the
   * entries it made are still this name's). Its first firing is the first after `now`. A new name
   * beyond the limit is refused (TooLargeError, 413); a replacement always fits.
   */
  set(request: ScheduleRequest, nextAt: number, now: number): { schedule: Schedule; replaced: boolean } {
    const old = this.byName.get(request.name)?.doc;
    if (!old && this.byName.size >= this.limit)
      throw new TooLargeError(
        `the queue holds ${this.byName.size} schedules, the most it takes; unschedule one or replace one by its schedule_name`,
      );
    const doc: ScheduleDoc = {
      name: request.name,
      cron: request.cron.source,
      tz: request.zone.name,
      overlap: request.overlap,
      catchup: request.catchup,
      message: request.message,
      nextAt,
      liveKeys: old?.liveKeys ?? [],
      lastEntryKey: old?.lastEntryKey ?? '',
      lastFiredAt: old?.lastFiredAt ?? 0,
      fired: old?.fired ?? 0,
      skipped: old?.skipped ?? 0,
      createdAt: new Date(now).toISOString(),
    };
    const schedule: Schedule = { doc, cron: request.cron, zone: request.zone };
    this.byName.set(doc.name, schedule);
    this.changed = true;
    return { schedule, replaced: old !== undefined };
  }

  remove(name: string): boolean {
    this.changed = true;
    return this.byName.delete(name);
  }

  /** The schedules due at `now`, earliest first. */
  due(now: number): Schedule[] {
    this.changed = true;
    return [...this.byName.values()].filter((s) => s.doc.nextAt <= now).sort((a, b) => a.doc.nextAt - b.doc.nextAt);
  }

  /**
   * Loads the stored schedules. One whose firing passed while the queue was down fires once at
   * once with `catchup: one`; with `none` its next firing is the next from now. Returns the writes
   * of the schedules that changed. A document that cannot be read is skipped and logged (it stays in
   * the store, as an unreadable entry does).
   */
  load(rows: ScheduleRow[], now: number, log: Logger): StoreOp[] {
    const ops: StoreOp[] = [];
    for (const row of rows) {
      let schedule: Schedule;
      try {
        const doc = JSON.parse(row.doc) as ScheduleDoc;
        doc.message.Control = mapOf(doc.message.Control);
        doc.message.Data = mapOf(doc.message.Data);
        schedule = { doc, cron: parseCron(doc.cron), zone: TimeZone.of(doc.tz) };
      } catch (e) {
        log.error(`queue schedule '${row.name}' in the store is unreadable (${(e as Error).message}); it is skipped`);
        continue;
      }
      const { doc } = schedule;
      if (doc.nextAt < now) {
        const missedAt = new Date(doc.nextAt).toISOString();
        if (doc.catchup === Catchup.One)
          log.info(
            `queue schedule '${doc.name}' missed its firing(s) since ${missedAt}: one entry for them now (catchup one)`,
          );
        else {
          doc.nextAt = followingFiring(schedule, now);
          ops.push(putScheduleOp(doc));
          log.info(`queue schedule '${doc.name}' missed its firing(s) since ${missedAt}: none made up (catchup none)`);
        }
      }
      this.byName.set(doc.name, schedule);
    }
    if (this.byName.size > 0) log.info(`queue loaded ${this.byName.size} schedule(s)`);
    this.changed = true;
    return ops;
  }

  /**
   * Points the timer at the earliest firing after a change (one timer however many schedules).
   * unref: a schedule never keeps a stopped node alive. Capped: Node fires a longer timeout at once;
   * an early wake finds nothing due and arms again.
   */
  arm(onDue: () => void): void {
    if (!this.changed) return;
    this.changed = false;
    let next = NEVER;
    for (const s of this.byName.values()) next = Math.min(next, s.doc.nextAt);
    if (this.timer && this.timerAt === next) return;
    this.stop();
    if (next === NEVER) return;
    this.timerAt = next;
    this.timer = setTimeout(onDue, Math.min(MAX_TIMEOUT_MS, Math.max(0, next - Date.now()))).unref();
  }

  /** The timer went off (the actor handles its `schedule-due`): the next arm sets a new one. */
  woke(): void {
    this.stop();
    this.changed = true;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** Whether an overlap policy lets a firing add an entry while `live` earlier ones are still in the queue. */
export function roomFor(overlap: Overlap, live: number): boolean {
  return overlap === Overlap.Allow || live < (overlap === Overlap.BufferOne ? 2 : 1);
}
