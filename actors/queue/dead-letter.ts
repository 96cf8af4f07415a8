/**
 * The dead-letter child: hands a dead entry to its dead-letter channel with Control
 * `deadletter_reason`, `attempts` and `last_error`, by acknowledged delivery (execute). Until the
 * hand-over is acknowledged the entry stays in the store as dead, and the hand-over is retried
 * with backoff: a dead letter is never dropped because its target was briefly away.
 */
import { isSuccessCode } from '../../protocol/codes.js';
import type { Message } from '../../protocol/message.js';
import { emptyMap } from '../../protocol/message.js';
import type { HiveClient } from '../hive/client.js';
import type { Logger } from '../shared/logger.js';
import { inMessageTrace } from '../shared/trace-scope.js';
import type { ActorRef, ParentRef, Runtime } from '../../supervisors/runtime.js';
import type { QueueEntry } from './entry.js';

export interface DeadLetterMsg {
  type: 'dead-letter';
  entry: QueueEntry;
  /** Hand-over attempts so far (for the backoff). */
  tries: number;
}

/** What the dead-letter actor tells the queue actor once the target acknowledged. */
export interface DeadLetteredMsg {
  type: 'dead-lettered';
  key: string;
}

const MAX_BACKOFF_MS = 60_000;

/** The message the dead-letter channel receives. */
export function deadLetterMessage(entry: QueueEntry): Message {
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

export function spawnDeadLetter(runtime: Runtime, parent: ParentRef, hive: HiveClient, timeoutMs: number, log: Logger, queue: () => ActorRef<DeadLetteredMsg>): ActorRef<DeadLetterMsg> {
  return runtime.spawn<undefined, DeadLetterMsg>(parent, {
    name: 'dead-letter',
    init: () => undefined,
    receive: (s, msg, ctx) => {
      const { entry } = msg;
      void hive.execute(entry.deadLetter, deadLetterMessage(entry), timeoutMs).then((r) => {
        if (isSuccessCode(r.Code)) {
          inMessageTrace(entry.message, () => log.info(`entry ${entry.key} dead-lettered to '${entry.deadLetter}' after ${entry.attempts} attempt(s)`));
          runtime.tell(queue(), { type: 'dead-lettered', key: entry.key });
          return;
        }
        const wait = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** msg.tries);
        inMessageTrace(entry.message, () => log.warn(`dead-letter target '${entry.deadLetter}' refused entry ${entry.key} (${r.Code} ${r.Message}); retrying in ${wait} ms`));
        setTimeout(() => runtime.tell(ctx.self, { ...msg, tries: msg.tries + 1 }), wait).unref();
      });
      return s;
    },
  });
}
