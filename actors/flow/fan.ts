/**
 * A `map`'s elements or a `parallel`'s branches (README, Flows; docs/ARCHITECTURE.md, The life of a
 * run): the step holds one MaxRuns place and sends its elements itself, up to its concurrency, each
 * retried in place (step-send.ts sendWithRetry); every element's Result is kept and written as it
 * comes, so a restart sends only the elements without one. Driven by the flow core (flow-core.ts)
 * through FanHost.
 */
import { Code, isSuccessCode } from '../../protocol/codes.js';
import { describeError } from '../../protocol/errors.js';
import type { Result } from '../../protocol/message.js';
import { emptyMap, failure, resultFromError } from '../../protocol/message.js';
import type { MapStep, ParallelStep, SendSpec, Step } from './definition.js';
import type { FlowScope } from './flow-text.js';
import type { AfterStore, FanElementEnded, FlowMsg } from './flow-messages.js';
import type { Live } from './live.js';
import { nextToken } from './live.js';
import { mapItems } from './map-items.js';
import type { Run } from './run.js';
import { stepKey } from './run.js';
import type { SendRequest } from './step-send.js';
import { sendWithRetry } from './step-send.js';

/** What a fan needs of the flow core. */
export interface FanHost {
  /** No element starts: the service stops or drains (a run goes on at its step after the restart). */
  readonly halted: boolean;
  scopeOf(run: Run): FlowScope;
  /** The request of one message of `spec` (the hive, the gate, its timeout else DefaultTimeout). */
  request(spec: SendSpec & { readonly timeoutMs: number | undefined }, scope: FlowScope, key: string): SendRequest;
  release(live: Live): void;
  succeeded(run: Run, step: Step, result: Result): void;
  failed(run: Run, step: Step, result: Result): void;
  cancelNow(run: Run): void;
  persist(run: Run, then: AfterStore): void;
  tell(msg: FlowMsg): void;
  countSent(): void;
}

/** Starts the fan: the Results kept so far stay (a restart sends only the others). */
export function startFan(host: FanHost, run: Run, step: MapStep | ParallelStep, live: Live): void {
  if (!run.fan) {
    let items: unknown[];
    try {
      items = step.kind === 'map' ? mapItems(step.items.render(host.scopeOf(run))) : step.branches.map((b) => b.name);
    } catch (e) {
      host.release(live);
      return host.failed(
        run,
        step,
        failure(resultFromError(e).Code, `step '${step.name}'.map.items: ${describeError(e)}`),
      );
    }
    run.fan = { items, results: items.map(() => null) };
  }
  live.fanToken = nextToken();
  live.fanActive = 0;
  live.fanNext = 0;
  sendFan(host, run, step, live);
}

/** Sends the fan's next elements, up to its concurrency; ends the step once every element has its Result. */
function sendFan(host: FanHost, run: Run, step: MapStep | ParallelStep, live: Live): void {
  const fan = run.fan!;
  const limit = step.kind === 'map' ? step.concurrency : fan.items.length;
  const halted = (): boolean => host.halted || live.cancelRequested;
  while (live.fanActive < limit && live.fanNext < fan.items.length && !halted()) {
    const index = live.fanNext++;
    if (fan.results[index] !== null) continue;
    const item = fan.items[index];
    const sub = step.kind === 'map' ? step.each : step.branches[index]!.sub;
    const scope: FlowScope =
      step.kind === 'map' ? { ...host.scopeOf(run), Item: item, Index: index } : host.scopeOf(run);
    const part = step.kind === 'map' ? `:${index}` : `.${sub.name}`;
    const token = live.fanToken;
    const at = Date.now();
    live.fanActive++;
    host.countSent();
    void sendWithRetry(host.request(sub, scope, stepKey(run, step.name, part)), sub.retry, halted).then(
      ({ result, attempts }) =>
        host.tell({ type: 'fan-done', key: run.key, token, index, result, attempts, at, ms: Date.now() - at }),
    );
  }
  if (live.fanActive > 0) return;
  host.release(live);
  if (live.cancelRequested) return host.cancelNow(run);
  if (fan.results.some((r) => r === null)) return; // halted: the run goes on at this step after the restart
  const results = fan.results as Result[];
  run.fan = undefined;
  const failedAt = results.findIndex((r) => !isSuccessCode(r.Code));
  if (step.kind === 'parallel') step.branches.forEach((b, i) => (run.steps[b.name] = results[i]!));
  if (failedAt >= 0) {
    const r = results[failedAt]!;
    const which = step.kind === 'map' ? `element ${failedAt}` : `branch '${step.branches[failedAt]!.name}'`;
    return host.failed(run, step, { ...r, Message: `step '${step.name}' ${which}: ${r.Message}` });
  }
  host.succeeded(run, step, { Code: Code.Success, Message: 'Success', Data: emptyMap(), List: results });
}

/** One element of a fan ended: its Result kept (and written), the next one sent. */
export function fanDone(
  host: FanHost,
  run: Run,
  where: { step: MapStep | ParallelStep; live: Live },
  ended: FanElementEnded,
): void {
  const { step, live } = where;
  const { index, result, attempts, at, ms } = ended;
  live.fanActive--;
  const name = step.kind === 'map' ? `${step.name}[${index}]` : `${step.name}.${step.branches[index]!.name}`;
  run.attempts.push({ step: name, attempt: attempts, at, ms, code: result.Code, message: result.Message });
  // a failed element is kept too: the step fails once the others ended (a replay sends the fan again)
  run.fan!.results[index] = result;
  if (live.fanActive > 0 || live.fanNext < run.fan!.items.length) host.persist(run, 'none');
  sendFan(host, run, step, live);
}
