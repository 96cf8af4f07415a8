/**
 * bcrypt comparisons off the event loop. bcryptjs is JavaScript: a comparison at cost 10 is about
 * 0.1 s of CPU, and on the event loop a flood of wrong passwords (every guess a comparison) starved
 * every other request of the process — a valid user waited 4 s (the gateway, the console, the queue
 * behind them). Here each comparison runs in a worker thread; the event loop only posts it and reads
 * the answer. The workers are few (one fewer than the cores, at least one, at most four), so guesses
 * can take the workers' time but not the event loop's; what waits is bounded (MAX_WAITING): beyond
 * it a verification is refused at once as unavailable (503) instead of queueing without end.
 */
import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { UnavailableError } from '../../protocol/errors.js';

/** Comparisons waiting for a worker, at most. */
const MAX_WAITING = 64;

// a CommonJS script: an eval'd worker is one, and reads bcryptjs from the path the main thread resolved
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const bcrypt = require(workerData.bcrypt);
parentPort.on('message', (m) => {
  let ok = false;
  try { ok = bcrypt.compareSync(m.password, m.hash); } catch { ok = false; }
  parentPort.postMessage({ id: m.id, ok });
});`;

interface Job {
  id: number;
  password: string;
  hash: string;
  resolve: (ok: boolean) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Job | undefined;
}

export class VerifyPool {
  private slots: Slot[] | undefined;
  private readonly waiting: Job[] = [];
  private next = 0;
  private closed = false;
  /** Comparisons made (a figure: the cache and the throttle show as comparisons not made). */
  compared = 0;

  constructor(private readonly size = Math.max(1, Math.min(4, availableParallelism() - 1))) {}

  /** Whether `password` matches the bcrypt `hash`; rejects with UnavailableError when too many wait. */
  compare(password: string, hash: string): Promise<boolean> {
    if (this.closed) return Promise.reject(new UnavailableError('the gateway is shutting down'));
    if (this.waiting.length >= MAX_WAITING)
      return Promise.reject(new UnavailableError('too many sign-ins are being verified; retry shortly'));
    return new Promise<boolean>((resolve, reject) => {
      this.waiting.push({ id: this.next++, password, hash, resolve, reject });
      this.pump();
    });
  }

  /** Stops the workers; what waits is refused. */
  async close(): Promise<void> {
    this.closed = true;
    for (const j of this.waiting.splice(0)) j.reject(new UnavailableError('the gateway is shutting down'));
    const slots = this.slots ?? [];
    this.slots = undefined;
    for (const s of slots) s.job?.reject(new UnavailableError('the gateway is shutting down'));
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private pump(): void {
    this.slots ??= Array.from({ length: this.size }, () => this.spawn());
    for (const slot of this.slots) {
      if (slot.job !== undefined) continue;
      const job = this.waiting.shift();
      if (job === undefined) return;
      slot.job = job;
      this.compared++;
      // ref'd while it works (a process must not exit under a pending sign-in), unref'd while idle
      slot.worker.ref();
      slot.worker.postMessage({ id: job.id, password: job.password, hash: job.hash });
    }
  }

  private spawn(): Slot {
    const bcrypt = createRequire(import.meta.url).resolve('bcryptjs');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { bcrypt } });
    const slot: Slot = { worker, job: undefined };
    worker.unref();
    worker.on('message', (m: { id: number; ok: boolean }) => {
      const job = slot.job;
      slot.job = undefined;
      worker.unref();
      if (job && job.id === m.id) job.resolve(m.ok);
      this.pump();
    });
    worker.on('error', (e) => {
      // a worker that died takes its job with it; a new one takes its place
      slot.job?.reject(e);
      slot.job = undefined;
      if (this.slots && !this.closed) this.slots[this.slots.indexOf(slot)] = this.spawn();
      this.pump();
    });
    return slot;
  }
}
