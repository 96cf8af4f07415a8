/**
 * One run of a flow (docs/ARCHITECTURE.md, The life of a run): its Input, its position, every
 * step's kept Result and every attempt. The whole document is written to the store (a queue store's
 * entry row: key, seq, state, due time, document) before the run's next step starts.
 */
import type { Message, Result } from '../../protocol/message.js';
import { emptyRecord } from '../../protocol/message.js';
import type { StoreOp } from '../queue/store.js';

/** A run's states; `running` and `waiting` are in progress, the others final. */
export const RunState = {
  /** A step is under way, or the run is in line for a place (MaxRuns). */
  Running: 'running',
  /** In a wait step, or between the attempts of a retry, until `dueAt`. */
  Waiting: 'waiting',
  Succeeded: 'succeeded',
  Failed: 'failed',
  Cancelled: 'cancelled',
} as const;
export type RunState = (typeof RunState)[keyof typeof RunState];
export const RUN_STATES: readonly RunState[] = Object.values(RunState);

export function isFinal(state: RunState): boolean {
  return state === RunState.Succeeded || state === RunState.Failed || state === RunState.Cancelled;
}

/** One attempt of one step. */
export interface AttemptRecord {
  step: string;
  /** 1 for the first attempt of a visit of the step. */
  attempt: number;
  /** Start (epoch ms) and duration. */
  at: number;
  ms: number;
  code: number;
  message: string;
}

export interface Run {
  key: string;
  seq: number;
  state: RunState;
  input: Message;
  created: number;
  updated: number;
  /** The step in progress or next to run; undefined once the run ended. */
  step: string | undefined;
  /** Attempts of `step` made in this visit (a retry's count). */
  attempt: number;
  /** Visits per step: a step reached again (a loop, a replay) sends a new idempotency key. */
  visits: Record<string, number>;
  /** Waiting: when the run goes on (epoch ms); 0 otherwise. */
  dueAt: number;
  /** Each finished step's kept Result. */
  steps: Record<string, Result>;
  /** The last step that sent and kept a Result (the run's answer unless the flow has a result). */
  last: string | undefined;
  attempts: AttemptRecord[];
  /** The run's answer once it ended. */
  result: Result | undefined;
  /** The step a failed run failed at (replay starts there). */
  failedStep: string | undefined;
  /** Cancelled: the on_cancel step runs, then the run ends cancelled. */
  cancelling: boolean;
  idempotencyKey: string | undefined;
  ended: number | undefined;
  /** A map or parallel under way: its elements and the Result of each one finished (null: not yet). */
  fan?: { items: unknown[]; results: Array<Result | null> } | undefined;
}

/**
 * The store's write of a run. A waiting run's row says 'scheduled' in the store's state column (its
 * document keeps `waiting`): the queue store's timed rows, which it counts and pages by due time
 * without reading documents (parked-runs.ts), are those of its states waiting for a time.
 */
export function putOp(run: Run): StoreOp {
  return {
    type: 'put',
    key: run.key,
    seq: run.seq,
    state: run.state === RunState.Waiting ? TIMED_ROW_STATE : run.state,
    dueAt: run.dueAt,
    doc: JSON.stringify(run),
  };
}

/** The store state column of a waiting run: one of the queue store's timed states (sqlite-schema.ts TIMED). */
const TIMED_ROW_STATE = 'scheduled';

/** A run read back from its stored document. */
export function runOf(doc: string): Run {
  const run = JSON.parse(doc) as Run;
  // JSON has no null-prototype maps: the Input's and the Results' maps get theirs back (untrusted keys such as __proto__)
  run.input = { ...run.input, Control: nullProto(run.input.Control), Data: nullProto(run.input.Data) };
  run.steps = nullProto(run.steps);
  for (const r of Object.values(run.steps)) r.Data = nullProto(r.Data);
  if (run.result) run.result.Data = nullProto(run.result.Data);
  for (const r of run.fan?.results ?? []) if (r) r.Data = nullProto(r.Data);
  return run;
}

function nullProto<T>(o: Record<string, T>): Record<string, T> {
  return Object.assign(emptyRecord<T>(), o);
}

/**
 * The idempotency key of a step's message: `<run key>:<step>`, `:<index>` for an element of a map (or
 * `<run key>:<step>.<branch>` for a parallel's branch), and `:v<visit>` from a step's second visit on.
 */
export function stepKey(run: Run, step: string, part?: string): string {
  const visit = run.visits[step] ?? 1;
  return `${run.key}:${step}${part ?? ''}${visit > 1 ? `:v${visit}` : ''}`;
}
