/**
 * What the Flows pages and GET /api/flows show, and the operator's actions on a run, as the flow's
 * own commands over the hive (README, Flows: status, list, fetch, replay, cancel) — the console never
 * opens a flow's store, as it never opens a queue's. A page lists the keys of its runs (`list` with
 * `list_offset` / `list_limit`, the count of all that match in `matched`), then fetches each.
 */
import { BadInputError, NotFoundError } from '../../protocol/errors.js';
import type { Result, ValueMap } from '../../protocol/message.js';
import { emptyMap, resultFromError } from '../../protocol/message.js';
import { journalAction } from './action-journal.js';
import type { AttemptRecord, RunState } from '../../actors/flow/run.js';
import { RUN_STATES } from '../../actors/flow/run.js';
import type { ActionInput } from './queue-commands.js';
// a service's command over its channel, whatever its kind: the flow's commands are sent as the queue's
import { queueCommand as serviceCommand } from './queue-commands.js';
import { ok } from './queue-reads.js';
import { readPage, readSearch } from './paged-search.js';
import type { ConsoleService, ConsoleSources } from './sources.js';

/** A run's states as the flow's `status` counts them. */
export { RUN_STATES } from '../../actors/flow/run.js';
type RunStateName = RunState;

const first = (r: Result, field: string): string => r.Data[field]?.[0] ?? '';

function flowNames(sources: ConsoleSources): string[] {
  return sources
    .services()
    .filter((s) => s.kind === 'flow')
    .map((s) => s.name);
}

/** The flow service of that name, or 404. */
export function flowNamed(sources: ConsoleSources, name: string): ConsoleService {
  const f = sources.services().find((s) => s.kind === 'flow' && s.name === name);
  if (!f)
    throw new NotFoundError(`no flow named '${name}' on this node (flows: ${flowNames(sources).join(', ') || 'none'})`);
  return f;
}

export interface FlowSummary {
  name: string;
  /** The channel a message starts a run on. */
  channel: string;
  /** Runs in progress (running + waiting). */
  inProgress: number;
  counts: Record<RunStateName, number>;
}

export async function flowSummary(sources: ConsoleSources, flow: ConsoleService): Promise<FlowSummary> {
  const r = ok(await serviceCommand(sources, flow, 'status'), `status of flow ${flow.name}`);
  const counts = Object.fromEntries(RUN_STATES.map((s) => [s, Number(first(r, s) || 0)])) as FlowSummary['counts'];
  return { name: flow.name, channel: flow.channel, inProgress: Number(first(r, 'queuesize') || 0), counts };
}

export function allFlowSummaries(sources: ConsoleSources): Promise<FlowSummary[]> {
  return Promise.all(flowNames(sources).map((n) => flowSummary(sources, flowNamed(sources, n))));
}

/** A search of the runs page (all optional but the state): by key, or by step, Code, age and an Input Data field's value. */
export interface RunSearch {
  state: RunStateName;
  key?: string;
  step?: string;
  code?: string;
  field?: string;
  value?: string;
  olderThan?: string;
  newerThan?: string;
  page: number;
}

/** Reads a search from query parameters; a bad one is 400 naming it (the flow checks the rest: a bad Code or age is its 400). */
export function runSearchOf(params: URLSearchParams): RunSearch {
  const search = readSearch(params, RUN_STATES, 'failed', [
    ['key', 'key'],
    ['step', 'step'],
    ['code', 'code'],
    ['field', 'field'],
    ['value', 'value'],
    ['older_than', 'olderThan'],
    ['newer_than', 'newerThan'],
  ]);
  return { ...search, state: search.state as RunStateName };
}

/** The query string of a search at a page (links of the pager and the state tabs). */
export function runSearchQuery(s: RunSearch, page: number): string {
  const q = new URLSearchParams({ state: s.state });
  for (const [k, v] of [
    ['key', s.key],
    ['step', s.step],
    ['code', s.code],
    ['field', s.field],
    ['value', s.value],
    ['older_than', s.olderThan],
    ['newer_than', s.newerThan],
  ] as const)
    if (v !== undefined) q.set(k, v);
  if (page > 1) q.set('page', String(page));
  return q.toString();
}

/** One attempt of one step. */
export type RunAttempt = AttemptRecord;

/** One run as the console shows it. */
export interface RunView {
  key: string;
  state: string;
  created: string;
  updated: string;
  /** The step in progress or next to run ('' once ended). */
  step: string;
  failedStep: string;
  code: string;
  due: string;
  input: { Class: string; Operation: string; Control: ValueMap; Data: ValueMap };
  attempts: RunAttempt[];
  /** Each finished step's kept Result. */
  steps: Record<string, Result>;
  result: Result | null;
}

function runOf(r: Result): RunView {
  const doc = (r.List?.[0] ?? {}) as {
    input?: Partial<RunView['input']>;
    attempts?: RunAttempt[];
    steps?: Record<string, Result>;
    result?: Result | null;
  };
  return {
    key: first(r, 'key'),
    state: first(r, 'state'),
    created: first(r, 'created'),
    updated: first(r, 'updated'),
    step: first(r, 'step'),
    failedStep: first(r, 'failed_step'),
    code: first(r, 'code'),
    due: first(r, 'due'),
    input: {
      Class: doc.input?.Class ?? '',
      Operation: doc.input?.Operation ?? '',
      Control: doc.input?.Control ?? emptyMap(),
      Data: doc.input?.Data ?? emptyMap(),
    },
    attempts: doc.attempts ?? [],
    steps: doc.steps ?? {},
    result: doc.result ?? null,
  };
}

export async function fetchRun(sources: ConsoleSources, flow: ConsoleService, key: string): Promise<RunView> {
  return runOf(ok(await serviceCommand(sources, flow, 'fetch', { key }), `run ${key}`));
}

export interface RunPage {
  search: RunSearch;
  total: number;
  pages: number;
  runs: RunView[];
}

/** The keys a search matches (the flow's `list`), then the runs of the page asked for. */
export async function searchRuns(sources: ConsoleSources, flow: ConsoleService, search: RunSearch): Promise<RunPage> {
  const control: Record<string, string> = { state: search.state };
  for (const [name, v] of [
    ['step', search.step],
    ['code', search.code],
    ['field', search.field],
    ['value', search.value],
    ['older_than', search.olderThan],
    ['newer_than', search.newerThan],
  ] as const)
    if (v !== undefined) control[name] = v;
  const page = await readPage(
    search,
    (name, c) => serviceCommand(sources, flow, name, c),
    { control, countField: 'matched', ok: (r) => ok(r, `list of flow ${flow.name}`) },
    runOf,
  );
  return { search, total: page.total, pages: page.pages, runs: page.items };
}

/**
 * The operator's actions on a run (POST /api/flows/<name>/<action>): the controls each takes, which it
 * needs, whether it takes Data (a replay's Data replaces those fields of the run's Input). Anything
 * else is refused (400) naming it, so a form or script cannot slip another command in.
 */
const FLOW_ACTIONS = {
  replay: { controls: ['key', 'step'], required: ['key'], data: true },
  cancel: { controls: ['key'], required: ['key'], data: false },
} as const satisfies Record<string, { controls: readonly string[]; required: readonly string[]; data: boolean }>;
type FlowAction = keyof typeof FLOW_ACTIONS;

function checkedFlowControls(action: FlowAction, input: ActionInput): Record<string, string> {
  const spec = FLOW_ACTIONS[action];
  const taken: readonly string[] = spec.controls;
  const out: Record<string, string> = {};
  for (const [name, values] of Object.entries(input.control)) {
    if (!taken.includes(name))
      throw new BadInputError(`${action} does not take control '${name}'; it takes ${taken.join(', ')}`);
    if (values.length > 1) throw new BadInputError(`${action} takes one ${name}, got ${values.length}`);
    const v = values[0] ?? '';
    if (v.trim() !== '') out[name] = v.trim();
  }
  for (const name of spec.required)
    if (out[name] === undefined) throw new BadInputError(`${action} needs control '${name}'`);
  if (!spec.data && Object.keys(input.data).length > 0) throw new BadInputError(`${action} takes no Data`);
  return out;
}

/** An operator's action on a run: the flow's answer (a refusal is its Code), written to the journal with the operator's name. */
export async function flowAct(
  sources: ConsoleSources,
  flowName: string,
  action: string,
  input: ActionInput,
  user: string,
): Promise<Result> {
  if (!Object.hasOwn(FLOW_ACTIONS, action))
    throw new NotFoundError(`unknown flow action '${action}'; actions: ${Object.keys(FLOW_ACTIONS).join(', ')}`);
  const flow = flowNamed(sources, flowName);
  const a = action as FlowAction;
  let result: Result;
  try {
    result = await serviceCommand(
      sources,
      flow,
      a,
      checkedFlowControls(a, input),
      a === 'replay' ? input.data : emptyMap(),
    );
  } catch (e) {
    result = resultFromError(e);
  }
  journalAction(sources, user, { service: flow.name, action, input, result });
  return result;
}
