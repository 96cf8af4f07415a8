/**
 * The plain-TCP receiver's bound on messages emitted and not yet passed on by the hive's bridge
 * (stream-listener.ts Backlog). Fire-and-forget has no acknowledgement to wait for, but a sender
 * faster than the hive would otherwise fill memory with its backlog (100,000 frames on one
 * connection held ~500 MB, and the collector then took half of the receiver's CPU): past HIGH the
 * connections stop being read until the backlog is down to LOW — TCP's window slows the sender, as
 * rsyslog's imtcp does when its queue is full. Nothing is dropped; UDP cannot be paused and is not.
 */
import type { Backlog } from './stream-listener.js';

/** Messages in the bridge's mailbox at most before the connections stop being read. */
const HIGH = 512;
/** Reading resumes when the backlog has fallen to this. */
const LOW = 128;

export class EmitBacklog implements Backlog {
  private inFlight = 0;
  private waiting: Array<() => void> = [];

  sent(): void {
    this.inFlight++;
  }

  passed(): void {
    if (--this.inFlight <= LOW && this.waiting.length > 0) {
      const waiting = this.waiting;
      this.waiting = [];
      for (const resume of waiting) resume();
    }
  }

  full(): boolean {
    return this.inFlight >= HIGH;
  }

  whenDrained(resume: () => void): void {
    this.waiting.push(resume);
  }
}
