/**
 * The callers waiting for their runs (README, Flows: Starting and answering): a `call` that started a
 * run is answered when the run ends, or 202 with the run's key once AnswerWithin passed.
 */
import { Code } from '../../protocol/codes.js';
import type { Result } from '../../protocol/message.js';
import { copyMap, failure, mapOf } from '../../protocol/message.js';
import type { Run } from './run.js';
import { isFinal } from './run.js';

interface Waiter {
  respond(result: Result): void;
  timer: NodeJS.Timeout;
}

/** The answer of an ended run: its result (the flow's result, else its last step's kept Result). */
function answerOf(run: Run): Result {
  const r = run.result ?? failure(Code.ServiceError, 'the run has no result');
  return { ...r, Data: copyMap(r.Data) };
}

export class Callers {
  private readonly waiting = new Map<string, Waiter[]>();

  constructor(private readonly answerWithinMs: number) {}

  /** Holds `respond` until the run ends, or answers 202 with its key after AnswerWithin. */
  hold(run: Run, respond: (r: Result) => void): void {
    if (isFinal(run.state)) return respond(answerOf(run));
    const list = this.waiting.get(run.key) ?? [];
    this.waiting.set(run.key, list);
    const waiter: Waiter = {
      respond,
      timer: setTimeout(() => {
        const rest = (this.waiting.get(run.key) ?? []).filter((w) => w !== waiter);
        if (rest.length > 0) this.waiting.set(run.key, rest);
        else this.waiting.delete(run.key);
        respond({
          Code: 202,
          Message: `the run goes on; ask with command fetch and key ${run.key}`,
          Data: mapOf({ key: [run.key], state: [run.state] }),
          List: [],
        });
      }, this.answerWithinMs),
    };
    list.push(waiter);
  }

  /** Answers every caller of an ended run. */
  answer(run: Run): void {
    const list = this.waiting.get(run.key);
    if (!list) return;
    this.waiting.delete(run.key);
    for (const w of list) {
      clearTimeout(w.timer);
      w.respond(answerOf(run));
    }
  }

  /** Stops every timer (the flow stopped; its callers time out at the hive). */
  stop(): void {
    for (const list of this.waiting.values()) for (const w of list) clearTimeout(w.timer);
    this.waiting.clear();
  }
}
