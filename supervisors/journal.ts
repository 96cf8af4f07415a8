/**
 * The supervision journal: every actor start, stop, crash, decision and restart as one structured
 * line, and the last N kept in memory for the dashboard; operators' console actions are written here
 * too, with the operator's name. It is the only place supervision writes to,
 * so nothing about a crash is ever lost to a stray console line.
 */

/** Kinds of supervision events. */
export const JournalEvent = {
  Start: 'start',
  Stop: 'stop',
  Crash: 'crash',
  Decision: 'decision',
  Restart: 'restart',
  Escalation: 'escalation',
  UnhandledRejection: 'unhandled-rejection',
  /** An operator's action in the console (a queue command), with the operator's name. */
  Action: 'action',
  /** A damaged store salvaged at a service's start (StoreRecovery: salvage), with its counts. */
  Salvage: 'salvage',
  /** A queue's circuit breaker opened, half-opened or closed (actors/queue/breaker.ts), with why. */
  Breaker: 'breaker',
  /** A reload of the node file, applied or refused, with who asked (signal, watch, console user) and the diff. */
  Reload: 'reload',
} as const;
export type JournalEvent = (typeof JournalEvent)[keyof typeof JournalEvent];

/** One supervision event. */
export interface JournalEntry {
  /** ISO time of the event. */
  time: string;
  event: JournalEvent;
  /** Actor path, for example `/node/echo-1/worker`. */
  path: string;
  /** Error class and message of a crash. */
  error?: { class: string; message: string };
  /** The message the actor was handling when it crashed (crash-cause.ts), masked like the logs. */
  cause?: string;
  /** The decision taken (restart, stop, escalate). */
  decision?: string;
  /** Backoff before a restart. */
  delayMs?: number;
  /** Restarts counted in the policy window, including this one. */
  restarts?: number;
  /** The trace of the message being handled when the event was recorded (docs/ARCHITECTURE.md, Tracing). */
  trace_id?: string;
  /** The operator who took an action (console). */
  user?: string;
  /** What the action was and its outcome: `replay key=… → 200 replayed 1`; of a salvage, its counts. */
  action?: string;
}

/** Where journal lines go besides memory (the node's logger). */
export type JournalSink = (entry: JournalEntry) => void;

/** Per-actor totals the dashboard shows without scanning the ring. */
export interface ActorTotals {
  crashes: number;
  restarts: number;
  lastCrash?: { time: string; class: string; message: string };
}

export class Journal {
  private readonly ring: JournalEntry[] = [];
  private next = 0;
  private readonly totals = new Map<string, ActorTotals>();
  private readonly sinks: JournalSink[] = [];

  /**
   * `mask` hides secrets in the texts an entry carries (error messages, crash causes): the node
   * passes its logger's masking, so the journal shown in the console masks what the logs mask.
   * `traceOf` gives the trace id of the message being handled now, if any: the node gives its tracing's.
   */
  constructor(
    private readonly capacity = 500,
    private readonly opts: { mask?: (text: string) => string; traceOf?: () => string | undefined } = {},
  ) {}

  /** Adds a sink (the logger); sinks that throw are ignored so the journal itself never fails. */
  addSink(sink: JournalSink): void {
    this.sinks.push(sink);
  }

  record(entry: Omit<JournalEntry, 'time'>): JournalEntry {
    const traceId = this.opts.traceOf?.();
    const full: JournalEntry = {
      time: new Date().toISOString(),
      ...entry,
      ...(traceId === undefined ? {} : { trace_id: traceId }),
    };
    const mask = this.opts.mask;
    if (mask && full.error) full.error = { class: full.error.class, message: mask(full.error.message) };
    if (mask && full.cause !== undefined) full.cause = mask(full.cause);
    if (this.ring.length < this.capacity) this.ring.push(full);
    else this.ring[this.next] = full;
    this.next = (this.next + 1) % this.capacity;
    this.count(full);
    for (const sink of this.sinks) {
      try {
        sink(full);
      } catch {
        // a broken sink must not take supervision down with it
      }
    }
    return full;
  }

  /** The kept entries, oldest first. */
  entries(): JournalEntry[] {
    if (this.ring.length < this.capacity) return [...this.ring];
    return [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
  }

  /** Totals of one actor path (zeros when it never crashed). */
  totalsOf(path: string): ActorTotals {
    return this.totals.get(path) ?? { crashes: 0, restarts: 0 };
  }

  private count(e: JournalEntry): void {
    if (e.event !== JournalEvent.Crash && e.event !== JournalEvent.Restart) return;
    const t = this.totals.get(e.path) ?? { crashes: 0, restarts: 0 };
    if (e.event === JournalEvent.Crash) {
      t.crashes++;
      if (e.error) t.lastCrash = { time: e.time, class: e.error.class, message: e.error.message };
    } else {
      t.restarts++;
    }
    this.totals.set(e.path, t);
  }
}

/** The error class and message of a thrown value, for journal lines. */
export function errorSummary(error: unknown): { class: string; message: string } {
  if (error instanceof Error) return { class: error.name || error.constructor.name, message: error.message };
  return { class: typeof error, message: String(error) };
}
