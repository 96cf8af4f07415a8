/**
 * The retry scheduler child: holds the entries waiting for a time — retrying ones their requeue
 * timer, scheduled ones their `delay` / `not_before` — and tells the queue actor when they are due.
 * One timer for the earliest due time, however many entries wait. If it crashes, the queue actor
 * re-schedules every retrying and scheduled entry (its state says which).
 */
import type { ActorRef, ParentRef, Runtime } from '../../supervisors/runtime.js';
import { MinHeap } from './heap.js';

export type RetryMsg = { type: 'schedule'; key: string; dueAt: number } | { type: 'clear' } | { type: 'fire' };

/** What the scheduler tells the queue actor: entries now due, or that it (re)started empty. */
export type DueMsg = { type: 'due'; keys: string[] } | { type: 'retry-restarted' };

/** The longest setTimeout Node honours (2^31 - 1 ms, about 24.8 days). */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

interface RetryState {
  heap: MinHeap<string>;
  timer: NodeJS.Timeout | undefined;
  timerAt: number;
}

export function spawnRetryScheduler(
  runtime: Runtime,
  parent: ParentRef,
  queue: () => ActorRef<DueMsg>,
): ActorRef<RetryMsg> {
  const arm = (s: RetryState, self: ActorRef<RetryMsg>): void => {
    const next = s.heap.peekPriority();
    if (next === undefined || (s.timer && s.timerAt <= next)) return;
    if (s.timer) clearTimeout(s.timer);
    s.timerAt = next;
    // unref: a retry waiting for its time never keeps the process alive by itself (a stopped node exits).
    // Capped: Node fires a longer timeout at once; an early fire finds nothing due and arms again.
    s.timer = setTimeout(
      () => runtime.tell(self, { type: 'fire' }),
      Math.min(MAX_TIMEOUT_MS, Math.max(0, next - Date.now())),
    ).unref();
  };
  return runtime.spawn<RetryState, RetryMsg>(parent, {
    name: 'retry-scheduler',
    init: () => {
      // a restarted scheduler has forgotten its entries: the queue actor schedules them again
      queueMicrotask(() => runtime.tell(queue(), { type: 'retry-restarted' }));
      return { heap: new MinHeap<string>(), timer: undefined, timerAt: 0 };
    },
    receive: (s, msg, ctx) => {
      switch (msg.type) {
        case 'schedule':
          s.heap.push(msg.dueAt, msg.key);
          arm(s, ctx.self);
          return s;
        case 'clear':
          s.heap.clear();
          if (s.timer) clearTimeout(s.timer);
          s.timer = undefined;
          return s;
        case 'fire': {
          s.timer = undefined;
          const now = Date.now();
          const keys: string[] = [];
          while ((s.heap.peekPriority() ?? Infinity) <= now) keys.push(s.heap.pop()!);
          if (keys.length > 0) runtime.tell(queue(), { type: 'due', keys });
          arm(s, ctx.self);
          return s;
        }
      }
    },
    afterStop: (s) => {
      if (s.timer) clearTimeout(s.timer);
    },
  });
}
