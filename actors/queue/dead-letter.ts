/**
 * The dead-letter child: hands a dead entry to its dead-letter channel with Control
 * `deadletter_reason`, `attempts` and `last_error`, by acknowledged delivery (execute). Until the
 * hand-over is acknowledged the entry stays in the store as dead, and the hand-over is retried
 * with backoff: a dead letter is not dropped because its target was briefly away. The retries are
 * bounded (DeadLetterRetries, waits doubling up to MAX_BACKOFF_MS): a target that never answers
 * leaves the entry in the dead set with one log line, instead of a retry loop logging for as long as
 * the node runs. A replay, purge, delete or clear of the entry cancels its hand-over
 * (docs/ARCHITECTURE.md, The life of one queue entry).
 */
import { isSuccessCode } from '../../protocol/codes.js';
import type { Message } from '../../protocol/message.js';
import { emptyMap } from '../../protocol/message.js';
import type { HiveClient } from '../hive/client.js';
import type { Logger } from '../observe/logger.js';
import { inMessageTrace } from '../observe/trace-scope.js';
import type { ActorRef, ParentRef, Runtime } from '../../supervisors/runtime.js';
import type { QueueEntry } from './entry.js';

export type DeadLetterMsg =
  | {
      type: 'dead-letter';
      entry: QueueEntry;
      /** Hand-over attempts so far (for the backoff). */
      tries: number;
      /** A retry's own hand-over: dropped when the entry's hand-over was cancelled or started again meanwhile. */
      handover?: Handover;
    }
  /** The entry was replayed, purged, deleted or cleared: no further hand-over. */
  | { type: 'cancel'; keys: readonly string[] }
  /** The queue was cleared: every hand-over ends. */
  | { type: 'cancel-all' };

/** What the dead-letter actor tells the queue actor once the target acknowledged, or once it gave up. */
export type DeadLetteredMsg =
  | { type: 'dead-lettered'; key: string }
  /** DeadLetterRetries retries were refused: the entry stays dead (in the dead set) and is not handed over again. */
  | { type: 'dead-letter-gave-up'; key: string; tries: number; last: string };

/** Longest wait between two hand-over attempts. */
const MAX_BACKOFF_MS = 60_000;

/** One entry's hand-over under way; its timer is the wait before the next try. */
interface Handover {
  timer?: NodeJS.Timeout;
}

/** The message the dead-letter channel receives. */
function deadLetterMessage(entry: QueueEntry): Message {
  const last = entry.history[entry.history.length - 1];
  const control = Object.assign(emptyMap(), entry.message.Control, {
    deadletter_reason: [entry.deadReason ?? 'attempts exhausted'],
    attempts: [String(entry.attempts)],
    last_error: [last ? `${last.code} ${last.message}` : ''],
    key: [entry.key],
    channel: [entry.channel],
  });
  return { Class: entry.message.Class, Operation: entry.message.Operation, Control: control, Data: entry.message.Data };
}

/** The wait before hand-over try `tries + 1`: 1 s doubling, at most MAX_BACKOFF_MS. */
const backoffMs = (tries: number): number => Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(tries, 16));

export interface DeadLetterOptions {
  timeoutMs: number;
  /** Retries after the first refused hand-over (DeadLetterRetries). */
  retries: number;
  log: Logger;
  /** The queue actor, told of each hand-over's end. */
  queue: () => ActorRef<DeadLetteredMsg>;
}

export function spawnDeadLetter(
  runtime: Runtime,
  parent: ParentRef,
  hive: HiveClient,
  opts: DeadLetterOptions,
): ActorRef<DeadLetterMsg> {
  const { log, queue } = opts;
  const end = (pending: Map<string, Handover>, key: string): void => {
    const h = pending.get(key);
    if (h?.timer) clearTimeout(h.timer);
    pending.delete(key);
  };
  return runtime.spawn<Map<string, Handover>, DeadLetterMsg>(parent, {
    name: 'dead-letter',
    init: () => new Map(),
    receive: (pending, msg, ctx) => {
      if (msg.type === 'cancel') {
        for (const key of msg.keys) end(pending, key);
        return pending;
      }
      if (msg.type === 'cancel-all') {
        for (const key of [...pending.keys()]) end(pending, key);
        return pending;
      }
      const { entry } = msg;
      // a retry of a hand-over that was cancelled (or started again: a replayed entry that died again) is dropped
      if (msg.handover && pending.get(entry.key) !== msg.handover) return pending;
      if (!msg.handover) end(pending, entry.key);
      const handover: Handover = msg.handover ?? {};
      pending.set(entry.key, handover);
      void hive.execute(entry.deadLetter, deadLetterMessage(entry), opts.timeoutMs).then((r) => {
        if (pending.get(entry.key) !== handover) return; // cancelled while it ran
        if (isSuccessCode(r.Code)) {
          pending.delete(entry.key);
          inMessageTrace(entry.message, () =>
            log.info(`entry ${entry.key} dead-lettered to '${entry.deadLetter}' after ${entry.attempts} attempt(s)`),
          );
          runtime.tell(queue(), { type: 'dead-lettered', key: entry.key });
          return;
        }
        const refused = `${r.Code} ${r.Message}`;
        if (msg.tries >= opts.retries) {
          pending.delete(entry.key);
          runtime.tell(queue(), { type: 'dead-letter-gave-up', key: entry.key, tries: msg.tries + 1, last: refused });
          return;
        }
        const wait = backoffMs(msg.tries);
        // the first refusal is a warning; the retries after it are debug lines, and giving up is one more warning
        inMessageTrace(entry.message, () =>
          msg.tries === 0
            ? log.warn(
                `dead-letter target '${entry.deadLetter}' refused entry ${entry.key} (${refused}); retrying up to ${opts.retries} time(s), waits doubling from ${wait} ms to ${MAX_BACKOFF_MS} ms`,
              )
            : log.debug(
                `dead-letter target '${entry.deadLetter}' refused entry ${entry.key} again (${refused}); retry ${msg.tries + 1} of ${opts.retries} in ${wait} ms`,
              ),
        );
        handover.timer = setTimeout(
          () => runtime.tell(ctx.self, { ...msg, tries: msg.tries + 1, handover }),
          wait,
        ).unref();
      });
      return pending;
    },
  });
}
