/**
 * A flow's definition (README, Flows): a list of named steps, YAML or JSON, read into typed steps
 * whose texts are parsed templates. Every error names the step and the field, so `hivenode flow
 * check` and a node's start say in one line what is wrong; the graph checks (unknown targets,
 * unreachable steps, a loop without a wait) are in graph.ts.
 */
import { parse as parseYaml } from 'yaml';
import { parseDuration } from '../../config/values.js';
import { describeError } from '../../protocol/errors.js';
import type { BudgetOptions } from '../../template/budget.js';
import { FlowText } from './flow-text.js';

/** The hive's three verbs a step may send with. */
const SEND_KINDS = ['call', 'execute', 'emit'] as const;
type SendKind = (typeof SEND_KINDS)[number];
const STEP_KINDS = [...SEND_KINDS, 'choice', 'succeed', 'fail', 'wait', 'map', 'parallel'] as const;
type StepKind = (typeof STEP_KINDS)[number];

/** Codes a step retries when its `retry` names none: the retryable ones of README, Flows. */
const DEFAULT_RETRY_ON: readonly number[] = [429, 500, 502, 503, 504];

/** A step's retry rule. */
export interface RetryRule {
  /** Attempts after the first. */
  readonly count: number;
  /** Wait before the first retry (ms). */
  readonly timerMs: number;
  /** 'exponential' doubles the wait each attempt, with ±20 % jitter. */
  readonly backoff: 'fixed' | 'exponential';
  readonly on: ReadonlySet<number>;
}

/** Where a failure with one of `codes` (any failure when undefined) goes. */
interface CatchRule {
  readonly codes: ReadonlySet<number> | undefined;
  readonly next: string;
}

/** A name → template(s) map: each template renders one value. */
export type TextMap = ReadonlyArray<readonly [string, readonly FlowText[]]>;

interface StepBase {
  readonly name: string;
  /** The step to go to next; undefined: the next in the list (or the end, for the last one). */
  readonly next: string | undefined;
  /** `end: true`: the run ends after this step. */
  readonly end: boolean;
  readonly timeoutMs: number | undefined;
  readonly retry: RetryRule | undefined;
  readonly catches: readonly CatchRule[];
  /** What the step keeps of its Result: Data fields rendered with `.Result` in scope. */
  readonly result: TextMap | undefined;
}

/** What a sending step (or a map's or parallel's sub-step) sends. */
export interface SendSpec {
  readonly kind: SendKind;
  /** The step's name, or `<step>.<branch>` / `<step>[]` for a sub-step (messages name it). */
  readonly name: string;
  readonly channel: FlowText;
  readonly class: FlowText | undefined;
  readonly operation: FlowText | undefined;
  readonly control: TextMap;
  readonly data: TextMap;
}
export interface SendStep extends StepBase, SendSpec {
  readonly kind: SendKind;
}
/** A map's or a parallel's sub-step: what it sends, with its own timeout and retry (retried in place). */
interface SubStep extends SendSpec {
  readonly timeoutMs: number | undefined;
  readonly retry: RetryRule | undefined;
}
export interface MapStep extends StepBase {
  readonly kind: 'map';
  /** Renders the elements: a JSON array, else one element per non-empty line. */
  readonly items: FlowText;
  /** Elements sent at once. */
  readonly concurrency: number;
  readonly each: SubStep;
}
export interface ParallelStep extends StepBase {
  readonly kind: 'parallel';
  /** Named branches sent at once, each kept under its own name in .Steps. */
  readonly branches: ReadonlyArray<{ readonly name: string; readonly sub: SubStep }>;
}
export interface ChoiceStep extends StepBase {
  readonly kind: 'choice';
  readonly branches: ReadonlyArray<{ readonly when: FlowText; readonly next: string }>;
  /** Where to go when no branch holds; undefined: on in the list. */
  readonly otherwise: string | undefined;
}
interface SucceedStep extends StepBase {
  readonly kind: 'succeed';
}
export interface FailStep extends StepBase {
  readonly kind: 'fail';
  readonly code: FlowText;
  readonly message: FlowText;
}
export interface WaitStep extends StepBase {
  readonly kind: 'wait';
  /** A fixed wait (ms), or a template rendering a duration (`for`) or a time (`until`). */
  readonly forMs: number | undefined;
  readonly forText: FlowText | undefined;
  readonly until: FlowText | undefined;
}
export type Step = SendStep | ChoiceStep | SucceedStep | FailStep | WaitStep | MapStep | ParallelStep;

export interface FlowDefinition {
  readonly steps: readonly Step[];
  readonly byName: ReadonlyMap<string, Step>;
  /** The step run when a run is cancelled, if any. */
  readonly onCancel: string | undefined;
  /** The flow's own answer: Data fields rendered when the run succeeded. */
  readonly result: TextMap | undefined;
  /** Channels the definition names literally (AllowedChannels' default). */
  readonly literalChannels: ReadonlySet<string>;
}

/** A definition that cannot run: the message names the step and what is wrong. */
export class DefinitionError extends Error {
  override readonly name = 'DefinitionError';
}

const NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,99}$/;
const CHANNEL = /^[A-Za-z0-9_-]{1,200}$/;
const COMMON_KEYS = ['name', 'next', 'end', 'timeout', 'retry', 'catch', 'result'];
const KEYS: Record<StepKind, readonly string[]> = {
  call: ['class', 'operation', 'control', 'data'],
  execute: ['class', 'operation', 'control', 'data'],
  emit: ['class', 'operation', 'control', 'data'],
  choice: ['default'],
  succeed: [],
  fail: [],
  wait: [],
  map: [],
  parallel: [],
};
const SUB_KEYS = ['class', 'operation', 'control', 'data', 'timeout', 'retry'];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads one definition's fields; `budget` bounds every render of its templates. */
class Reader {
  constructor(private readonly budget: BudgetOptions) {}

  text(v: unknown, where: string): FlowText {
    if (typeof v === 'number' || typeof v === 'boolean') v = String(v);
    if (typeof v !== 'string') throw new DefinitionError(`${where}: expected a text (a template), got ${describe(v)}`);
    return new FlowText(v, where, this.budget);
  }

  optText(v: unknown, where: string): FlowText | undefined {
    return v === undefined ? undefined : this.text(v, where);
  }

  textMap(v: unknown, where: string): TextMap {
    if (v === undefined) return [];
    if (!isObj(v)) throw new DefinitionError(`${where}: expected a map of name → template (or list of templates)`);
    return Object.entries(v).map(
      ([k, t]) =>
        [
          k,
          Array.isArray(t) ? t.map((x, i) => this.text(x, `${where}.${k}[${i}]`)) : [this.text(t, `${where}.${k}`)],
        ] as const,
    );
  }
}

function describe(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v;
}

function duration(v: unknown, where: string): number {
  if (typeof v !== 'string' && typeof v !== 'number')
    throw new DefinitionError(`${where}: expected a duration such as 250ms, 5s, 1m (a plain number is seconds)`);
  try {
    return parseDuration(String(v));
  } catch (e) {
    throw new DefinitionError(`${where}: ${describeError(e)}`);
  }
}

function codes(v: unknown, where: string): Set<number> {
  const list = Array.isArray(v) ? v : [v];
  return new Set(
    list.map((c) => {
      const n = typeof c === 'number' ? c : typeof c === 'string' && /^\d{3}$/.test(c.trim()) ? Number(c) : NaN;
      if (!Number.isInteger(n) || n < 100 || n > 599)
        throw new DefinitionError(`${where}: '${String(c)}' is not a Code (100–599)`);
      return n;
    }),
  );
}

function targetName(v: unknown, where: string): string {
  if (typeof v !== 'string' || v === '') throw new DefinitionError(`${where}: expected a step name`);
  return v;
}

function retryRule(v: unknown, where: string): RetryRule {
  if (!isObj(v)) throw new DefinitionError(`${where}: expected {count, timer, backoff, on}`);
  for (const k of Object.keys(v))
    if (!['count', 'timer', 'backoff', 'on'].includes(k))
      throw new DefinitionError(`${where}: unknown field '${k}' (count, timer, backoff, on)`);
  const count = v.count ?? 3;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 0 || count > 1000)
    throw new DefinitionError(`${where}.count: expected a whole number from 0 to 1000`);
  const backoff = v.backoff ?? 'fixed';
  if (backoff !== 'fixed' && backoff !== 'exponential')
    throw new DefinitionError(`${where}.backoff: expected 'fixed' or 'exponential'`);
  return {
    count,
    timerMs: v.timer === undefined ? 1000 : duration(v.timer, `${where}.timer`),
    backoff,
    on: v.on === undefined ? new Set(DEFAULT_RETRY_ON) : codes(v.on, `${where}.on`),
  };
}

function catchRules(v: unknown, where: string): CatchRule[] {
  const list = Array.isArray(v) ? v : [v];
  return list.map((c, i) => {
    const at = `${where}[${i}]`;
    if (!isObj(c)) throw new DefinitionError(`${at}: expected {codes, next}`);
    for (const k of Object.keys(c))
      if (k !== 'codes' && k !== 'next') throw new DefinitionError(`${at}: unknown field '${k}' (codes, next)`);
    return {
      codes: c.codes === undefined ? undefined : codes(c.codes, `${at}.codes`),
      next: targetName(c.next, `${at}.next`),
    };
  });
}

function readSend(r: Reader, raw: Obj, kind: SendKind, name: string, at: string): SendSpec {
  const channel = r.text(raw[kind], `${at}.${kind}`);
  if (!channel.isTemplate && !CHANNEL.test(channel.source))
    throw new DefinitionError(`${at}.${kind}: '${channel.source}' is not a channel (1–200 of A-Z a-z 0-9 _ -)`);
  return {
    kind,
    name,
    channel,
    class: r.optText(raw.class, `${at}.class`),
    operation: r.optText(raw.operation, `${at}.operation`),
    control: r.textMap(raw.control, `${at}.control`),
    data: r.textMap(raw.data, `${at}.data`),
  };
}

/** A sub-step of a map or a parallel: one send with its own timeout and retry. */
function readSub(r: Reader, raw: unknown, name: string, at: string): SubStep {
  if (!isObj(raw)) throw new DefinitionError(`${at}: expected {call|execute|emit: <channel>, data, …}`);
  const kinds = SEND_KINDS.filter((k) => raw[k] !== undefined);
  if (kinds.length !== 1) throw new DefinitionError(`${at}: give exactly one of ${SEND_KINDS.join(', ')}`);
  const kind = kinds[0]!;
  for (const k of Object.keys(raw))
    if (k !== kind && !SUB_KEYS.includes(k))
      throw new DefinitionError(`${at}: unknown field '${k}' (${SUB_KEYS.join(', ')})`);
  return {
    ...readSend(r, raw, kind, name, at),
    timeoutMs: raw.timeout === undefined ? undefined : duration(raw.timeout, `${at}.timeout`),
    retry: raw.retry === undefined ? undefined : retryRule(raw.retry, `${at}.retry`),
  };
}

function kindOf(raw: Obj, where: string): StepKind {
  const kinds = STEP_KINDS.filter((k) => raw[k] !== undefined);
  if (kinds.length !== 1)
    throw new DefinitionError(
      `${where}: ${kinds.length === 0 ? 'says no kind' : `says ${kinds.join(' and ')}`}: give exactly one of ${STEP_KINDS.join(', ')}`,
    );
  return kinds[0]!;
}

function readStep(r: Reader, raw: unknown, index: number): Step {
  if (!isObj(raw)) throw new DefinitionError(`steps[${index}]: expected a step (a map with name and a kind)`);
  if (typeof raw.name !== 'string' || !NAME.test(raw.name))
    throw new DefinitionError(
      `steps[${index}]: name ${raw.name === undefined ? 'is missing' : `'${String(raw.name)}' is not a step name`} (a letter or _, then letters, digits, _ or -)`,
    );
  const name = raw.name;
  const at = `step '${name}'`;
  const kind = kindOf(raw, at);
  for (const k of Object.keys(raw))
    if (k !== kind && !COMMON_KEYS.includes(k) && !KEYS[kind].includes(k))
      throw new DefinitionError(`${at}: unknown field '${k}' for a ${kind} step`);
  if (raw.end !== undefined && typeof raw.end !== 'boolean')
    throw new DefinitionError(`${at}.end: expected true or false`);
  const base: StepBase = {
    name,
    next: raw.next === undefined ? undefined : targetName(raw.next, `${at}.next`),
    end: raw.end === true,
    timeoutMs: raw.timeout === undefined ? undefined : duration(raw.timeout, `${at}.timeout`),
    retry: raw.retry === undefined ? undefined : retryRule(raw.retry, `${at}.retry`),
    catches: raw.catch === undefined ? [] : catchRules(raw.catch, `${at}.catch`),
    result: raw.result === undefined ? undefined : r.textMap(raw.result, `${at}.result`),
  };
  if (base.next !== undefined && base.end) throw new DefinitionError(`${at}: says both next and end`);
  const body = raw[kind];
  switch (kind) {
    case 'call':
    case 'execute':
    case 'emit':
      return { ...base, ...readSend(r, raw, kind, name, at) };
    case 'map': {
      if (!isObj(body))
        throw new DefinitionError(`${at}.map: expected {items, concurrency, call|execute|emit: <channel>, data, …}`);
      const concurrency = body.concurrency ?? 4;
      if (typeof concurrency !== 'number' || !Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1024)
        throw new DefinitionError(`${at}.map.concurrency: expected a whole number from 1 to 1024`);
      if (body.items === undefined)
        throw new DefinitionError(
          `${at}.map: items is missing (a template rendering a JSON array, or one element per line)`,
        );
      const { items: _items, concurrency: _c, ...sub } = body;
      return {
        ...base,
        kind,
        items: r.text(body.items, `${at}.map.items`),
        concurrency,
        each: readSub(r, sub, `${name}[]`, `${at}.map`),
      };
    }
    case 'parallel': {
      if (!isObj(body) || Object.keys(body).length === 0)
        throw new DefinitionError(
          `${at}.parallel: expected named branches, each {call|execute|emit: <channel>, data, …}`,
        );
      const branches = Object.entries(body).map(([branch, sub]) => {
        if (!NAME.test(branch)) throw new DefinitionError(`${at}.parallel: branch name '${branch}' is not a step name`);
        return { name: branch, sub: readSub(r, sub, branch, `${at}.parallel.${branch}`) };
      });
      return { ...base, kind, branches };
    }
    case 'choice': {
      if (!Array.isArray(body) || body.length === 0)
        throw new DefinitionError(`${at}.choice: expected a list of {when, next}`);
      const branches = body.map((b: unknown, i) => {
        const bw = `${at}.choice[${i}]`;
        if (!isObj(b) || b.when === undefined) throw new DefinitionError(`${bw}: expected {when, next}`);
        for (const k of Object.keys(b))
          if (k !== 'when' && k !== 'next') throw new DefinitionError(`${bw}: unknown field '${k}' (when, next)`);
        return { when: r.text(b.when, `${bw}.when`), next: targetName(b.next, `${bw}.next`) };
      });
      return {
        ...base,
        kind,
        branches,
        otherwise: raw.default === undefined ? undefined : targetName(raw.default, `${at}.default`),
      };
    }
    case 'succeed':
      return { ...base, kind };
    case 'fail': {
      if (!isObj(body)) throw new DefinitionError(`${at}.fail: expected {code, message}`);
      for (const k of Object.keys(body))
        if (k !== 'code' && k !== 'message')
          throw new DefinitionError(`${at}.fail: unknown field '${k}' (code, message)`);
      return {
        ...base,
        kind,
        code: r.text(body.code ?? '500', `${at}.fail.code`),
        message: r.text(body.message ?? `the flow failed at step '${name}'`, `${at}.fail.message`),
      };
    }
    case 'wait': {
      if (typeof body === 'number' || (typeof body === 'string' && !body.includes('{{')))
        return { ...base, kind, forMs: duration(body, `${at}.wait`), forText: undefined, until: undefined };
      if (!isObj(body) || (body.for === undefined) === (body.until === undefined))
        throw new DefinitionError(
          `${at}.wait: expected a duration, or {for: <duration template>} or {until: <time template>}`,
        );
      return {
        ...base,
        kind,
        forMs: undefined,
        forText: r.optText(body.for, `${at}.wait.for`),
        until: r.optText(body.until, `${at}.wait.until`),
      };
    }
  }
}

/** Every send of the steps: the sending steps, and the sub-steps of maps and parallels. */
export function sendsOf(steps: readonly Step[]): SendSpec[] {
  const out: SendSpec[] = [];
  for (const s of steps) {
    if (s.kind === 'call' || s.kind === 'execute' || s.kind === 'emit') out.push(s);
    else if (s.kind === 'map') out.push(s.each);
    else if (s.kind === 'parallel') for (const b of s.branches) out.push(b.sub);
  }
  return out;
}

/**
 * Reads a definition's text (YAML, or JSON, which YAML reads too) into typed steps, without the graph
 * checks (graph.ts `parseDefinition` adds them). Every error is a DefinitionError (or FlowTextError)
 * whose message names the step and the field.
 */
export function readDefinition(text: string, budget: BudgetOptions = {}): FlowDefinition {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new DefinitionError(`the definition is neither YAML nor JSON: ${describeError(e).split('\n')[0]}`);
  }
  if (Array.isArray(doc)) doc = { steps: doc };
  if (!isObj(doc)) throw new DefinitionError('the definition must be a map with steps (or a list of steps)');
  for (const k of Object.keys(doc))
    if (!['steps', 'on_cancel', 'result'].includes(k))
      throw new DefinitionError(`unknown field '${k}' in the definition (steps, on_cancel, result)`);
  if (!Array.isArray(doc.steps) || doc.steps.length === 0)
    throw new DefinitionError('the definition has no steps: give steps as a list');
  const r = new Reader(budget);
  const steps = doc.steps.map((s: unknown, i) => readStep(r, s, i));
  const byName = new Map<string, Step>();
  for (const s of steps) {
    if (byName.has(s.name)) throw new DefinitionError(`step '${s.name}': the name is used by two steps`);
    byName.set(s.name, s);
  }
  const literalChannels = new Set<string>();
  for (const send of sendsOf(steps)) if (!send.channel.isTemplate) literalChannels.add(send.channel.source);
  for (const s of steps) {
    if (s.kind !== 'parallel') continue;
    for (const b of s.branches)
      if (
        byName.has(b.name) ||
        steps.some((o) => o !== s && o.kind === 'parallel' && o.branches.some((x) => x.name === b.name))
      )
        throw new DefinitionError(
          `step '${s.name}'.parallel: branch '${b.name}' is named like another step or branch (its Result is kept as .Steps.${b.name})`,
        );
  }
  const def: FlowDefinition = {
    steps,
    byName,
    onCancel: doc.on_cancel === undefined ? undefined : targetName(doc.on_cancel, 'on_cancel'),
    result: doc.result === undefined ? undefined : r.textMap(doc.result, 'result'),
    literalChannels,
  };
  return def;
}
