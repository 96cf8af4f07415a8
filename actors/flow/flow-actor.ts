/**
 * The flow actor (docs/ARCHITECTURE.md, The life of a run): owns the runs, takes the input channel's
 * messages (a start or a command) and the reports of its own writes, steps and timers, one at a time.
 * Its first message after a start or a restart loads the store; a restart after a crash reloads it,
 * so every run in progress goes on at its step.
 */
import { Code, isSuccessCode } from '../../protocol/codes.js';
import { codeOf, describeError } from '../../protocol/errors.js';
import type { Message, Result } from '../../protocol/message.js';
import { failure, firstValue, mapOf, resultFromError, success } from '../../protocol/message.js';
import { assertNever } from '../../protocol/never.js';
import type { ActorRef, ParentRef } from '../../supervisors/runtime.js';
import { inMessageTrace, runInScope } from '../observe/trace-scope.js';
import type { Delivery } from '../hive/transport.js';
import { commandOf, duplicateAnswer, runCommand } from './flow-commands.js';
import type { FlowDeps } from './flow-core.js';
import { FlowCore } from './flow-core.js';
import type { FlowMsg } from './flow-messages.js';
import type { ParkedNeed } from './parked-runs.js';
import type { Run } from './run.js';
import { RunState } from './run.js';
import { IDEMPOTENCY_KEY } from '../../protocol/idempotency.js';

interface FlowState {
  core: FlowCore;
  loaded: boolean;
}

/**
 * The runs parked in the store (parked-runs.ts) a message needs before it is handled: the run its
 * `key` control names (fetch, replay, cancel, purge), the run a start's idempotency key started, or
 * every parked run for a list. None when no run is parked or the run is in memory.
 */
function parkedNeed(core: FlowCore, message: Message): ParkedNeed | undefined {
  if (core.parked.count === 0) return undefined;
  let command: string;
  try {
    command = commandOf(message);
  } catch {
    return undefined;
  }
  // every parked run is waiting: a list of another state needs none of them
  if (command === 'list')
    return (firstValue(message.Control, 'state') ?? RunState.Waiting) === RunState.Waiting ? 'all' : undefined;
  const key =
    command === 'start'
      ? core.seen.runOf(firstValue(message.Control, IDEMPOTENCY_KEY))
      : firstValue(message.Control, 'key');
  return key !== undefined && !core.runs.has(key) ? { keys: [key] } : undefined;
}

/** After every message: the paging timer follows the parked runs. */
function settle(s: FlowState): FlowState {
  s.core.armPaging();
  return s;
}

/** Starts a run for a delivery, or answers the run its idempotency key started already. */
function start(core: FlowCore, delivery: Delivery): void {
  const message = delivery.message;
  const idem = firstValue(message.Control, IDEMPOTENCY_KEY);
  const earlier = core.seen.runOf(idem);
  const existing = earlier === undefined ? undefined : core.runs.get(earlier);
  if (existing) {
    delivery.respond(duplicateAnswer(core, existing));
    return;
  }
  core.start(message, idem, (run, error) => {
    if (!run) {
      const r = resultFromError(error);
      delivery.respond(
        codeOf(error) === Code.InsufficientStorage
          ? r
          : failure(Code.ServiceError, `the run was not stored: ${describeError(error)}`),
      );
      return;
    }
    // an execute is answered with the run's key once the run is durable; a call once the run ends (or 202)
    if (delivery.mode === 'call') core.callers.hold(run, (r) => delivery.respond(r));
    else delivery.respond(success(mapOf({ key: [run.key] })));
  });
}

export function spawnFlowActor(
  runtime: FlowDeps['runtime'],
  parent: ParentRef,
  deps: FlowDeps,
  onCore: (core: FlowCore) => void,
): ActorRef<FlowMsg> {
  const handle = (s: FlowState, msg: FlowMsg): FlowState | Promise<FlowState> => {
    const core = s.core;
    switch (msg.type) {
      case 'delivery': {
        const { delivery, trace } = msg;
        const serve = (parked: readonly Run[]): void =>
          runInScope(trace, () => {
            try {
              const command = commandOf(delivery.message);
              if (command === 'start') return start(core, delivery);
              const r: Result = runCommand(core, command, delivery.message, parked);
              // an execute of a command is acknowledged by its success
              if (delivery.mode === 'execute' && isSuccessCode(r.Code)) delivery.ack();
              else delivery.respond(r);
            } catch (e) {
              if (codeOf(e) >= 500) deps.log.error(`flow command failed: ${describeError(e)}`);
              delivery.respond(resultFromError(e));
            }
          });
        const need = parkedNeed(core, delivery.message);
        if (!need) {
          serve([]);
          break;
        }
        // runs parked in the store that the command names (or a list) are read first, the actor held meanwhile
        return core
          .readParked(need)
          .then(serve, (e: unknown) => {
            deps.log.error(`flow could not read runs from its store: ${describeError(e)}`);
            delivery.respond(resultFromError(e));
          })
          .then(() => settle(s));
      }
      case 'stored':
        core.stored(msg.key, msg.token, msg.then);
        break;
      case 'store-failed':
        core.storeFailed(msg.key, msg.token, msg.then, msg.error);
        break;
      case 'step-done': {
        const run = core.runs.get(msg.key);
        const done = (): void => core.stepDone(msg.key, msg.token, msg.result, msg.at, msg.ms);
        // what the outcome logs is about the run: in its Input's trace
        if (run) inMessageTrace(run.input, done);
        else done();
        break;
      }
      case 'fan-done':
        core.fanDone(msg.key, msg.token, msg);
        break;
      case 'due':
        core.due(msg.key);
        break;
      case 'page-in':
        return core.advanceHorizon().then(() => settle(s));
      case 'sweep':
        core.sweep();
        break;
      case 'flush':
        msg.reply();
        break;
      default:
        assertNever(msg, 'flow message');
    }
    return settle(s);
  };

  return runtime.spawn<FlowState, FlowMsg>(parent, {
    name: 'flow',
    init: (ctx) => {
      const core = new FlowCore(deps);
      core.self = ctx.self;
      onCore(core);
      // the load runs on the first message; this one makes sure there is one
      runtime.tell(ctx.self, { type: 'sweep' });
      return { core, loaded: false };
    },
    receive: (s, msg) => {
      if (s.loaded) return handle(s, msg);
      return s.core.load().then(() => {
        s.loaded = true;
        return handle(s, msg);
      });
    },
    afterStop: (s) => s.core.stop(),
  });
}
