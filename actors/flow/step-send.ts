/**
 * One attempt of a step that sends (README, Flows): its message rendered from the run's scope, its
 * channel checked against AllowedChannels, the stable `idempotency-key` control added, and the
 * hive's verb with the step's timeout. Resolves with the Result, never rejects: a render that fails
 * is the step's failure (400, 413), a channel not allowed 403.
 */
import { Code, SUCCESS_MESSAGE } from '../../protocol/codes.js';
import { IDEMPOTENCY_KEY } from '../../protocol/idempotency.js';
import { describeError } from '../../protocol/errors.js';
import type { Message, Result, ValueMap } from '../../protocol/message.js';
import { emptyMap, failure, makeMessage, resultFromError } from '../../protocol/message.js';
import type { ChannelGate } from '../../config/allowed-channels.js';
import { gateAdmits } from '../../config/allowed-channels.js';
import type { HiveClient } from '../hive/client.js';
import { TRACEPARENT, TRACESTATE } from '../observe/trace-context.js';
import { messageHop, withHop } from '../observe/trace-message.js';
import type { RetryRule, SendSpec, TextMap } from './definition.js';
import type { FlowScope } from './flow-text.js';

/** A map of rendered texts: one value per template. */
export function renderMap(map: TextMap, scope: FlowScope): ValueMap {
  const out = emptyMap();
  for (const [name, texts] of map) out[name] = texts.map((t) => t.render(scope));
  return out;
}

/** The message a step sends for a run (throws the template engine's errors). */
function stepMessage(step: SendSpec, scope: FlowScope, key: string): Message {
  const control = renderMap(step.control, scope);
  control[IDEMPOTENCY_KEY] = [key];
  return makeMessage({
    Class: step.class?.render(scope) ?? '',
    Operation: step.operation?.render(scope) ?? '',
    Control: control,
    Data: renderMap(step.data, scope),
  });
}

export interface SendRequest {
  readonly hive: HiveClient;
  /** The flow's NAME (its spans' service). */
  readonly service: string;
  readonly step: SendSpec;
  readonly scope: FlowScope;
  /** The message's idempotency key (run.ts stepKey). */
  readonly key: string;
  readonly timeoutMs: number;
  readonly gate: ChannelGate;
}

/** Sends one attempt of a step; resolves with its Result (a failure as a Result too). */
export async function sendStep(req: SendRequest): Promise<Result> {
  const { step, scope } = req;
  let channel: string;
  let message: Message;
  try {
    channel = step.channel.render(scope).trim();
    message = stepMessage(step, scope, req.key);
  } catch (e) {
    const r = resultFromError(e);
    return failure(r.Code, `step '${step.name}': ${describeError(e)}`);
  }
  // a channel rendered from the run's Input must not reach what the flow was not meant to reach (AllowedChannels)
  if (!gateAdmits(req.gate, channel))
    return failure(Code.Forbidden, `step '${step.name}': channel '${channel}' is not among the flow's AllowedChannels`);
  // a run is one trace (docs/ARCHITECTURE.md, Tracing): every attempt of every step is a span, child of
  // the span that started the run (its Input keeps the traceparent through the store, as a queue entry does)
  const input = scope.Input.Control;
  if (input[TRACEPARENT] && !message.Control[TRACEPARENT]) {
    message.Control[TRACEPARENT] = input[TRACEPARENT];
    if (input[TRACESTATE]) message.Control[TRACESTATE] = input[TRACESTATE];
  }
  const hop = messageHop(message, 'client', false, () => ({
    name: `${req.service} step`,
    service: req.service,
    attributes: { 'hivenode.flow.step': step.name, 'hivenode.channel': channel, 'hivenode.mode': step.kind },
  }));
  const result = await send(req.hive, step, channel, withHop(message, hop), req.timeoutMs);
  hop?.end(result.Code, result.Message);
  return result;
}

async function send(
  hive: HiveClient,
  step: SendSpec,
  channel: string,
  message: Message,
  timeoutMs: number,
): Promise<Result> {
  try {
    switch (step.kind) {
      case 'call':
        return await hive.call(channel, message, timeoutMs);
      case 'execute':
        return await hive.execute(channel, message, timeoutMs);
      case 'emit':
        return (await hive.emit(channel, message))
          ? { Code: Code.Success, Message: SUCCESS_MESSAGE, Data: emptyMap(), List: [] }
          : failure(Code.NotFound, `step '${step.name}': nobody took the emit on channel '${channel}'`);
    }
  } catch (e) {
    // a hive call resolves, never rejects; a bad channel name is refused by a throw
    return resultFromError(e);
  }
}

/** How long a retry waits before attempt `attempt + 1`: the timer, doubled per attempt with ±20 % jitter when exponential. */
export function retryDelay(retry: RetryRule, attempt: number): number {
  return Math.round(
    retry.backoff === 'fixed' ? retry.timerMs : retry.timerMs * 2 ** (attempt - 1) * (0.8 + Math.random() * 0.4),
  );
}

/**
 * A sub-step (of a map or a parallel) with its retries made in place: the elements of one step
 * share its place in the run, so their pauses are timers here, not the run's; after a restart an
 * element without a kept Result is sent again from its first attempt.
 */
export async function sendWithRetry(
  req: SendRequest,
  retry: RetryRule | undefined,
  stopped: () => boolean,
): Promise<{ result: Result; attempts: number }> {
  for (let attempt = 1; ; attempt++) {
    const result = await sendStep(req);
    if (!retry || attempt > retry.count || !retry.on.has(result.Code) || stopped())
      return { result, attempts: attempt };
    await new Promise((r) => setTimeout(r, retryDelay(retry, attempt)));
  }
}
