/**
 * The queue dialect (README, The queue): [[ ]] templates that fan one request out into queue entries.
 * Dot is a copy of the incoming request; functions build new requests and addEntry records a copy
 * of each. Mutators return '' so they print nothing.
 */
import { Param, FuncError } from '../funcs.js';
import type { FuncMap } from '../funcs.js';
import { valueString } from '../exec.js';
import { Kind, kindOf, sliceItems } from '../values.js';
import { CompiledCache } from './cache.js';
import { DialectTemplate, dialectCacheKey } from './dialect-template.js';
import type { DialectOptions } from './dialect-template.js';
import { charsOf } from '../budget.js';
import type { RenderBudget } from '../budget.js';
import { emptyMap, makeMessage, isForbiddenKey } from '../../protocol/message.js';
import type { Message, ValueMap } from '../../protocol/message.js';

export const QUEUE_DELIMS: [string, string] = ['[[', ']]'];
/** Default cap on entries one render may create. */
export const DEFAULT_MAX_ENTRIES = 100_000;

/** Options of a queue template (delimiters default to [[ ]], the name to 'queue'). */
export interface QueueRenderOptions extends DialectOptions {
  /** Entry limit; default 100000. */
  maxEntries?: number;
}

export interface QueueRenderResult {
  entries: Message[];
  output: string;
}

/** Per-render state the functions work on. */
interface QueueContext {
  request: Message;
  entries: Message[];
  maxEntries: number;
}

/**
 * Copies a map; with a budget each key is charged before its list is copied: its characters and
 * values, and an item for the key and each value. An entry is stored and sent on its own, so a value
 * shared by many entries is counted in each.
 */
function copyMap(m: ValueMap, budget: RenderBudget | undefined): ValueMap {
  const out = emptyMap();
  for (const k of Object.keys(m)) {
    if (isForbiddenKey(k)) continue;
    const values = m[k] ?? [];
    budget?.charge(k.length + charsOf(values), 1 + values.length);
    out[k] = [...values];
  }
  return out;
}

/** Copies a request; with a budget the copy is charged as an entry (an item, its class and operation, its maps). */
function copyMessage(m: Message, budget?: RenderBudget): Message {
  budget?.charge(m.Class.length + m.Operation.length, 1);
  return makeMessage({
    Class: m.Class,
    Operation: m.Operation,
    Control: copyMap(m.Control, budget),
    Data: copyMap(m.Data, budget),
  });
}

function isValueMap(v: unknown): v is ValueMap {
  return kindOf(v) === Kind.Map && !(v instanceof Map);
}

function asMessage(v: unknown, fn: string): Message {
  if (isValueMap(v)) {
    const m = v as unknown as Partial<Message>;
    if (typeof m.Class === 'string' && typeof m.Operation === 'string' && isValueMap(m.Control) && isValueMap(m.Data))
      return m as Message;
  }
  throw new FuncError(`${fn}: argument is not a request (use newRequest or getRequest)`);
}

function asValueMap(v: unknown, fn: string): ValueMap {
  if (isValueMap(v)) return v;
  throw new FuncError(`${fn}: argument is not a map (use newData, newControl or getRequestData)`);
}

/** The strings a value contributes: a list gives each element, anything else its %v text. */
function strings(v: unknown, fn: string): string[] {
  const k = kindOf(v);
  if (k === Kind.Slice) return sliceItems(v).map((x) => (typeof x === 'string' ? x : valueString(x)));
  if (k === Kind.Map || k === Kind.Invalid || k === Kind.Nil || k === Kind.Func)
    throw new FuncError(`${fn}: cannot add a value of this type`);
  return [typeof v === 'string' ? v : valueString(v)];
}

/** The names of the queue dialect's own functions (for a hint where another dialect meets one). */
export function queueFuncNames(): readonly string[] {
  return Object.keys(queueFuncs(() => ({}) as QueueContext));
}

function queueFuncs(ctx: () => QueueContext): FuncMap {
  const A = Param.Any;
  return {
    getValues: {
      fn: (data: unknown, name: string) => {
        const m = asValueMap(data, 'getValues');
        return Object.hasOwn(m, name) && !isForbiddenKey(name) ? [...(m[name] ?? [])] : [];
      },
      params: [A, Param.String],
    },
    getRequestData: { fn: (r: unknown) => asMessage(r, 'getRequestData').Data, params: [A] },
    getRequest: { fn: () => ctx().request, params: [] },
    setRequestClass: {
      fn: (r: unknown, c: string) => {
        asMessage(r, 'setRequestClass').Class = c;
        return '';
      },
      params: [A, Param.String],
    },
    setRequestOperation: {
      fn: (r: unknown, op: string) => {
        asMessage(r, 'setRequestOperation').Operation = op;
        return '';
      },
      params: [A, Param.String],
    },
    setRequestData: {
      fn: (r: unknown, d: unknown) => {
        asMessage(r, 'setRequestData').Data = asValueMap(d, 'setRequestData');
        return '';
      },
      params: [A, A],
    },
    setRequestControl: {
      fn: (r: unknown, c: unknown) => {
        asMessage(r, 'setRequestControl').Control = asValueMap(c, 'setRequestControl');
        return '';
      },
      params: [A, A],
    },
    newRequest: { fn: () => makeMessage(), params: [] },
    newData: { fn: () => emptyMap(), params: [] },
    newControl: { fn: () => emptyMap(), params: [] },
    addValue: {
      fn: (budget: RenderBudget, container: unknown, name: string, value: unknown) => {
        const m = asValueMap(container, 'addValue');
        if (isForbiddenKey(name)) throw new FuncError(`addValue: key '${name}' is not allowed`);
        const add = strings(value, 'addValue');
        const isNew = !Object.hasOwn(m, name);
        budget.charge(charsOf(add) + (isNew ? name.length : 0), add.length + (isNew ? 1 : 0));
        const list = isNew ? (m[name] = []) : (m[name] ?? []);
        for (const s of add) list.push(s);
        return '';
      },
      params: [A, Param.String, A],
      budget: true,
    },
    addEntry: {
      fn: (budget: RenderBudget, r: unknown) => {
        const c = ctx();
        if (c.entries.length >= c.maxEntries) throw new FuncError(`addEntry: more than ${c.maxEntries} entries`);
        c.entries.push(copyMessage(asMessage(r, 'addEntry'), budget));
        return '';
      },
      params: [A],
      budget: true,
    },
  };
}

/** A parsed queue template, rendered many times. */
export class QueueTemplate extends DialectTemplate<QueueContext> {
  constructor(
    source: string,
    private readonly opts: QueueRenderOptions = {},
  ) {
    super('queue', QUEUE_DELIMS, queueFuncs, source, opts);
  }

  /** Runs the define `defineName` ('' for the main template) against `request`. */
  render(defineName: string, request: Message): QueueRenderResult {
    const ctx: QueueContext = {
      request: copyMessage(request),
      entries: [],
      maxEntries: this.opts.maxEntries ?? DEFAULT_MAX_ENTRIES,
    };
    return this.run(ctx, () => {
      const output =
        defineName === '' ? this.template.execute(ctx.request) : this.template.executeTemplate(defineName, ctx.request);
      return { entries: ctx.entries, output };
    });
  }

  /** Names of the defines in the template, sorted. */
  defines(): string[] {
    return this.template.templateNames().filter((n) => n !== this.template.name);
  }
}

const cache = new CompiledCache<QueueTemplate>();

/**
 * Parses (cached by source and options) and renders a queue template; defineName '' runs the main
 * template, an unknown define fails with a TemplateError naming it.
 */
export function renderQueueTemplate(
  source: string,
  defineName: string,
  request: Message,
  opts: QueueRenderOptions = {},
): QueueRenderResult {
  return cache
    .get(dialectCacheKey(source, opts, opts.maxEntries), () => new QueueTemplate(source, opts))
    .render(defineName, request);
}
