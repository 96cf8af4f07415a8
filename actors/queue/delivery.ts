/**
 * The delivery child: sends an entry's message to its channel and reports the outcome to the queue
 * actor. Mode `call` succeeds on a 2xx Code; `execute` succeeds once delivery is acknowledged.
 * Deliveries run concurrently (the queue actor bounds how many); if this actor crashes, each
 * unfinished delivery is reported as a failed attempt, so no entry is left hanging.
 */
import { performance } from 'node:perf_hooks';
import { Code } from '../../protocol/codes.js';
import type { Message, Result } from '../../protocol/message.js';
import { failure } from '../../protocol/message.js';
import type { HiveClient } from '../hive/client.js';
import { onFailure } from '../../supervisors/undelivered.js';
import type { ActorRef, ParentRef, Runtime } from '../../supervisors/runtime.js';
import type { DeliveryMode } from './entry.js';
import { describeError } from '../../protocol/errors.js';
import { attemptHop } from './delivery-trace.js';

export interface DeliverMsg {
  type: 'deliver';
  key: string;
  channel: string;
  mode: DeliveryMode;
  message: Message;
  /** Which attempt this is (1 for the first): the attempt's span shows it. */
  attempt?: number;
  /** A batch (batches.ts): its entries' keys, `key` being the first, and the flight its outcome ends. */
  batch?: { keys: string[]; flight: number };
}

/** What the delivery actor tells the queue actor. */
export interface OutcomeMsg {
  type: 'outcome';
  key: string;
  result: Result;
  /** How long the attempt took, ms (the attempt history records it). */
  durationMs: number;
  /** The outcome of a batch: every entry's (batches.ts, entryResults). */
  batch?: { keys: string[]; flight: number };
}

/** `service`: the NAME the deliveries' spans and lines carry. */
export function spawnDelivery(
  runtime: Runtime,
  parent: ParentRef,
  hive: HiveClient,
  opts: { timeoutMs: number; queue: () => ActorRef<OutcomeMsg>; service?: string },
): ActorRef<DeliverMsg> {
  const { timeoutMs, queue, service = 'queue' } = opts;
  return runtime.spawn<undefined, DeliverMsg>(parent, {
    name: 'delivery',
    init: () => undefined,
    receive: (s, msg) => {
      const started = performance.now();
      const { hop, message } = attemptHop(service, msg);
      const send =
        msg.mode === 'execute'
          ? hive.execute(msg.channel, message, timeoutMs)
          : hive.call(msg.channel, message, timeoutMs);
      void send.then((result) => {
        hop?.end(result.Code, result.Message);
        runtime.tell(queue(), {
          type: 'outcome',
          key: msg.key,
          result,
          durationMs: Math.round(performance.now() - started),
          ...(msg.batch ? { batch: msg.batch } : {}),
        });
      });
      return s;
    },
  });
}

/** Tells the delivery actor to deliver; if it cannot (crashed, stopped) the queue gets a failed outcome. */
export function deliver(
  runtime: Runtime,
  delivery: ActorRef<DeliverMsg>,
  queue: ActorRef<OutcomeMsg>,
  msg: DeliverMsg,
): void {
  runtime.tell(
    delivery,
    onFailure(msg, (e) =>
      runtime.tell(queue, {
        type: 'outcome',
        key: msg.key,
        result: failure(Code.ServiceError, `delivery actor failed: ${describeError(e)}`),
        durationMs: 0,
        ...(msg.batch ? { batch: msg.batch } : {}),
      }),
    ),
  );
}
