/**
 * A flow's operations by the `command` control, as the queue's (README, Flows): `status`, `list`,
 * `fetch`, `replay`, `cancel`, `purge`; no command starts a run. Every answer carries the runs in
 * progress as `queuesize`.
 */
import { parseDuration } from '../../config/values.js';
import { Code } from '../../protocol/codes.js';
import { BadInputError, ConflictError, NotFoundError } from '../../protocol/errors.js';
import type { Message, Result, ValueMap } from '../../protocol/message.js';
import { emptyMap, firstValue, mapOf, success } from '../../protocol/message.js';
import type { FlowCore } from './flow-core.js';
import type { Run } from './run.js';
import { RUN_STATES, RunState, isFinal } from './run.js';

const FLOW_COMMANDS = ['start', 'status', 'list', 'fetch', 'replay', 'cancel', 'purge'] as const;
export type FlowCommand = (typeof FLOW_COMMANDS)[number];

/** The largest page of keys one `list` answers. */
const MAX_LIST_LIMIT = 10_000;

/** The command a message asks for (no `command` control: start a run). */
export function commandOf(message: Message): FlowCommand {
  const name = (firstValue(message.Control, 'command') ?? 'start').trim().toLowerCase() || 'start';
  if (!(FLOW_COMMANDS as readonly string[]).includes(name))
    throw new BadInputError(
      `command '${name}' is not known to a flow; use one of ${FLOW_COMMANDS.join(', ')} (no command starts a run)`,
    );
  return name as FlowCommand;
}

/** Runs per state: `running` (a step under way), `waiting` (a wait, a retry's pause, in line for MaxRuns), and the final ones. */
export function stateCounts(core: FlowCore): Record<RunState, number> {
  const counts = Object.fromEntries(RUN_STATES.map((s) => [s, 0])) as Record<RunState, number>;
  for (const run of core.runs.values()) counts[visibleState(core, run)]++;
  // the runs parked in the store are all waiting (parked-runs.ts)
  counts.waiting += core.parked.count;
  return counts;
}

/** A run's state as commands show it: a run in line for a place (MaxRuns) is waiting. */
function visibleState(core: FlowCore, run: Run): RunState {
  return run.state === RunState.Running && !core.isSending(run.key) ? RunState.Waiting : run.state;
}

function statusData(core: FlowCore, extra: ValueMap = emptyMap()): ValueMap {
  const counts = stateCounts(core);
  const data = emptyMap();
  for (const s of RUN_STATES) data[s] = [String(counts[s])];
  data.queuesize = [String(counts.running + counts.waiting)];
  return Object.assign(data, extra);
}

function runOfControl(core: FlowCore, message: Message): Run {
  const key = firstValue(message.Control, 'key');
  if (!key) throw new BadInputError('this command needs the control key (a run key)');
  const run = core.runs.get(key);
  if (!run) throw new NotFoundError(`no run with key '${key}'`);
  return run;
}

function whole(message: Message, name: string, min: number, max: number): number | undefined {
  const text = firstValue(message.Control, name);
  if (text === undefined) return undefined;
  const n = /^\d{1,9}$/.test(text) ? Number(text) : NaN;
  if (!(n >= min && n <= max))
    throw new BadInputError(`control ${name} is '${text}'; give a whole number from ${min} to ${max}`);
  return n;
}

function age(message: Message, name: string): number | undefined {
  const text = firstValue(message.Control, name);
  if (text === undefined) return undefined;
  try {
    return parseDuration(text);
  } catch {
    throw new BadInputError(`control ${name} is '${text}'; give a duration such as 30s, 10m or 2h`);
  }
}

/** `list`: run keys, oldest first, filtered by state, step, Code, age and an Input Data field; paged. `parked`: the runs held in the store only. */
function list(core: FlowCore, message: Message, parked: readonly Run[]): Result {
  const c = message.Control;
  const state = firstValue(c, 'state');
  if (state !== undefined && !(RUN_STATES as readonly string[]).includes(state))
    throw new BadInputError(`state '${state}' is not known; use one of ${RUN_STATES.join(', ')}`);
  const step = firstValue(c, 'step');
  const codeText = firstValue(c, 'code');
  const code = codeText === undefined ? undefined : Number(codeText);
  if (code !== undefined && !Number.isInteger(code))
    throw new BadInputError(`control code is '${codeText}'; give a Code such as 502`);
  const olderThan = age(message, 'older_than');
  const newerThan = age(message, 'newer_than');
  const field = firstValue(c, 'field');
  const value = firstValue(c, 'value');
  const offset = whole(message, 'list_offset', 0, 999_999_999) ?? 0;
  const limit = whole(message, 'list_limit', 1, MAX_LIST_LIMIT) ?? MAX_LIST_LIMIT;
  const now = Date.now();
  const keys: string[] = [];
  let matched = 0;
  const runs = [...core.runs.values(), ...parked].sort((a, b) => a.seq - b.seq);
  for (const run of runs) {
    if (state !== undefined && visibleState(core, run) !== state) continue;
    if (step !== undefined && run.step !== step && run.failedStep !== step) continue;
    if (code !== undefined && run.result?.Code !== code) continue;
    if (olderThan !== undefined && run.created > now - olderThan) continue;
    if (newerThan !== undefined && run.created < now - newerThan) continue;
    if (
      field !== undefined &&
      !(Object.hasOwn(run.input.Data, field) && (value === undefined || run.input.Data[field]!.includes(value)))
    )
      continue;
    if (matched++ >= offset && keys.length < limit) keys.push(run.key);
  }
  return success(statusData(core, mapOf({ objects: keys, matched: [String(matched)] })), []);
}

/** `fetch`: one run with its Input, position, every attempt and every kept Result (the document in List). */
function fetch(core: FlowCore, message: Message): Result {
  const run = runOfControl(core, message);
  const data = mapOf({
    key: [run.key],
    state: [visibleState(core, run)],
    created: [new Date(run.created).toISOString()],
    updated: [new Date(run.updated).toISOString()],
  });
  if (run.step !== undefined) data.step = [run.step];
  if (run.failedStep !== undefined) data.failed_step = [run.failedStep];
  if (run.result) data.code = [String(run.result.Code)];
  if (run.dueAt > 0) data.due = [new Date(run.dueAt).toISOString()];
  return success(statusData(core, data), [
    {
      key: run.key,
      state: visibleState(core, run),
      input: run.input,
      step: run.step ?? null,
      failedStep: run.failedStep ?? null,
      attempts: run.attempts,
      steps: run.steps,
      result: run.result ?? null,
    },
  ]);
}

/** Runs one command; a start is the flow actor's (it needs the delivery). `parked`: for a list, the runs held in the store only. */
export function runCommand(
  core: FlowCore,
  command: Exclude<FlowCommand, 'start'>,
  message: Message,
  parked: readonly Run[] = [],
): Result {
  switch (command) {
    case 'status':
      return success(statusData(core), []);
    case 'list':
      return list(core, message, parked);
    case 'fetch':
      return fetch(core, message);
    case 'replay': {
      const run = runOfControl(core, message);
      if (run.state !== RunState.Failed && run.state !== RunState.Cancelled)
        throw new ConflictError(`run '${run.key}' is ${run.state}: only a failed or cancelled run is replayed`);
      const from = firstValue(message.Control, 'step') ?? run.failedStep ?? core.deps.def.steps[0]!.name;
      if (!core.deps.def.byName.has(from)) throw new BadInputError(`step '${from}' is not in the flow's definition`);
      core.replay(run, from, message.Data);
      return success(statusData(core, mapOf({ key: [run.key], step: [from], replayed: ['1'] })), []);
    }
    case 'cancel': {
      const run = runOfControl(core, message);
      if (isFinal(run.state)) throw new ConflictError(`run '${run.key}' already ended ${run.state}`);
      core.cancel(run);
      return success(statusData(core, mapOf({ key: [run.key], cancelled: ['1'] })), []);
    }
    case 'purge': {
      const key = firstValue(message.Control, 'key');
      const state = firstValue(message.Control, 'state');
      if (state !== undefined && !isFinal(state as RunState))
        throw new BadInputError(
          `purge removes finished runs: state is one of ${RunState.Succeeded}, ${RunState.Failed}, ${RunState.Cancelled}`,
        );
      let runs: Run[];
      if (key !== undefined) {
        const run = runOfControl(core, message);
        if (!isFinal(run.state))
          throw new ConflictError(`run '${key}' is ${run.state}: cancel it first, a run in progress is not purged`);
        runs = [run];
      } else
        runs = [...core.runs.values()].filter((r) => isFinal(r.state) && (state === undefined || r.state === state));
      return success(statusData(core, mapOf({ purged: [String(core.drop(runs))] })), []);
    }
    default:
      throw new BadInputError(`command '${String(command)}' cannot run here`);
  }
}

/** The answer to a start whose idempotency key started a run already. */
export function duplicateAnswer(core: FlowCore, run: Run): Result {
  return {
    Code: Code.Success,
    Message: 'Success',
    Data: statusData(core, mapOf({ key: [run.key], state: [visibleState(core, run)], duplicate: ['true'] })),
    List: [],
  };
}
