/**
 * Runs actors that have mail, in passes. nact schedules every message with its own setImmediate,
 * so a request crossing two actors (the hive bridge, then a service) waited for two event-loop turns
 * before its work began. Here an actor told by another actor runs in the same pass, and a pass runs:
 *
 * - from a microtask, right after the code that woke the first actor, when it is the first pass of
 *   this event-loop turn: an idle node starts a request's work without waiting for the loop;
 * - from setImmediate otherwise: under load, actors woken while I/O callbacks run wait for the
 *   check phase and are run together in one pass, after every ready socket has been read.
 *
 * Measured on MariaDB at 32 in flight (A/B in one process): running every pass from a microtask
 * fell to 0.73 of direct sequelize, against 0.83-0.87 with one inline pass per turn, because freshly
 * admitted requests were handled between the reads of answers already waiting.
 *
 * A pass starts no further actor once it has handled PASS_BUDGET messages; the rest goes on from
 * setImmediate, so sockets, disk completions and timers are taken up between passes however much
 * mail there is. Small passes keep
 * the disk busy: the durable queue (fsync per group commit, 32 deliveries in flight) moved 50-55k
 * entries/s with passes of 8-32 messages, 38-43k with passes of 1024, which held the completion of
 * one commit back until a long cascade of deliveries had run. Actors run in the order they were
 * woken; one with more mail than its batch goes to the back of the line.
 */
import { Fifo } from './fifo.js';

/** Something the dispatcher can run: handles up to one batch and returns how many messages it took. */
export interface Runnable {
  runBatch(): number;
}

/** Messages after which a pass leaves the remaining actors to an immediate. */
const PASS_BUDGET = 16;

export class Dispatcher {
  private readonly queue = new Fifo<Runnable>();
  /** A pass is queued (as a microtask or an immediate) or running. */
  private pending = false;
  /** This event-loop turn has had its pass from a microtask. */
  private inlineUsed = false;
  private readonly pass = (): void => this.runPass();
  private readonly boundary = (): void => {
    this.inlineUsed = false;
  };

  constructor(private readonly budget = PASS_BUDGET) {}

  /** Queues an actor to run; the caller guarantees it is not queued already. */
  schedule(actor: Runnable): void {
    this.queue.push(actor);
    if (this.pending) return;
    this.pending = true;
    if (this.inlineUsed) {
      setImmediate(this.pass);
      return;
    }
    this.inlineUsed = true;
    // an immediate runs once per turn, after I/O: the next turn may run a pass inline again
    setImmediate(this.boundary);
    queueMicrotask(this.pass);
  }

  private runPass(): void {
    let handled = 0;
    while (this.queue.size > 0) {
      if (handled >= this.budget) {
        // the rest goes on from an immediate, after the I/O callbacks that are ready
        setImmediate(this.pass);
        return;
      }
      handled += this.queue.shift().runBatch();
    }
    this.pending = false;
  }
}

/** One per process: the turns are those of the one event loop every runtime shares. */
export const dispatcher = new Dispatcher();
