/**
 * The console's queue actions and reads as the queue's own commands, sent over the hive to the
 * queue's channel like any caller's (one source of truth: the console never opens a store). Each
 * action takes only the controls its command reads; anything else is refused (400) naming it, so a
 * form or script cannot slip a `command` or an unbounded `delete` (which would clear the queue) in.
 */
import { BadInputError, NotFoundError } from '../../protocol/errors.js';
import type { Result, ValueMap } from '../../protocol/message.js';
import { emptyMap, makeMessage, mapOf } from '../../protocol/message.js';
import type { ConsoleService, ConsoleSources } from './sources.js';

const CALL_TIMEOUT_MS = 10_000;

const FILTERS = ['state', 'groupby', 'list', 'older_than', 'newer_than'] as const;

/** The actions (POST /api/queues/<name>/<action>): the controls each takes, which it needs, and whether it takes Data. */
export const QUEUE_ACTIONS = {
  pause: { controls: [], required: [], data: false },
  resume: { controls: [], required: [], data: false },
  step: { controls: ['key'], required: [], data: false },
  replay: { controls: ['key', ...FILTERS, 'channel', 'mode'], required: [], data: true },
  delete: { controls: ['key'], required: ['key'], data: false },
  purge: { controls: ['key', ...FILTERS], required: [], data: false },
  run: { controls: ['schedule_name'], required: ['schedule_name'], data: false },
  breaker: { controls: ['breaker', 'channel'], required: ['breaker', 'channel'], data: false },
  resume_channel: { controls: ['channel'], required: ['channel'], data: false },
} as const satisfies Record<string, { controls: readonly string[]; required: readonly string[]; data: boolean }>;
export type QueueAction = keyof typeof QUEUE_ACTIONS;

export function isQueueAction(name: string): name is QueueAction {
  return Object.hasOwn(QUEUE_ACTIONS, name);
}

/** What an action was given: controls (one value each is read) and, for replay, Data. */
export interface ActionInput {
  control: ValueMap;
  data: ValueMap;
}

/** The queue service of that name, or 404. */
export function queueNamed(sources: ConsoleSources, name: string): ConsoleService {
  const q = sources.services().find((s) => s.kind === 'queue' && s.name === name);
  if (!q)
    throw new NotFoundError(
      `no queue named '${name}' on this node (queues: ${queueNames(sources).join(', ') || 'none'})`,
    );
  return q;
}

export function queueNames(sources: ConsoleSources): string[] {
  return sources
    .services()
    .filter((s) => s.kind === 'queue')
    .map((s) => s.name);
}

/** Sends one queue command with its controls (and Data) to the queue's channel; resolves with the queue's Result. */
export function queueCommand(
  sources: ConsoleSources,
  queue: ConsoleService,
  command: string,
  control: Record<string, string> = {},
  data: ValueMap = emptyMap(),
): Promise<Result> {
  const controls = mapOf(Object.entries(control).map(([k, v]) => [k, [v]] as const));
  controls.command = [command];
  return sources.hive.call(
    queue.channel,
    makeMessage({ Class: 'queue', Operation: 'console', Control: controls, Data: data }),
    CALL_TIMEOUT_MS,
  );
}

/** Checks an action's input against what its command takes: the single-valued controls to send. */
function checkedControls(action: QueueAction, input: ActionInput): Record<string, string> {
  const spec = QUEUE_ACTIONS[action];
  const taken: readonly string[] = spec.controls;
  const out: Record<string, string> = {};
  for (const [name, values] of Object.entries(input.control)) {
    if (!taken.includes(name))
      throw new BadInputError(
        `${action} does not take control '${name}'${taken.length ? `; it takes ${taken.join(', ')}` : ''}`,
      );
    const v = values[0] ?? '';
    if (v.trim() !== '') out[name] = v.trim();
  }
  for (const name of spec.required)
    if (out[name] === undefined) throw new BadInputError(`${action} needs control '${name}'`);
  if (!spec.data && Object.keys(input.data).length > 0) throw new BadInputError(`${action} takes no Data`);
  return out;
}

/**
 * A channel disabled by DisableAfter, resumed and its dead entries replayed in one click: `resume`
 * with `channel` (its breaker closes, the held entries go out), then `replay` of the channel's dead
 * entries; the answer is the resume's with `replayed` added (a failed replay is the answer instead).
 */
async function resumeAndReplay(sources: ConsoleSources, queue: ConsoleService, channel: string): Promise<Result> {
  const resumed = await queueCommand(sources, queue, 'resume', { channel });
  if (resumed.Code >= 300) return resumed;
  const replayed = await queueCommand(sources, queue, 'replay', { state: 'dead', groupby: 'channel', list: channel });
  if (replayed.Code >= 300) return replayed;
  resumed.Data.replayed = replayed.Data.replayed ?? ['0'];
  return resumed;
}

/** Runs an action: the queue's command (`run` is the queue's `run_schedule`, which obeys the schedule's overlap rule). */
export async function runAction(
  sources: ConsoleSources,
  queue: ConsoleService,
  action: QueueAction,
  input: ActionInput,
): Promise<Result> {
  const controls = checkedControls(action, input);
  if (action === 'resume_channel') return resumeAndReplay(sources, queue, controls.channel!);
  return queueCommand(
    sources,
    queue,
    action === 'run' ? 'run_schedule' : action,
    controls,
    action === 'replay' ? input.data : emptyMap(),
  );
}
