/**
 * The JSON API the pages are built from, for scripts too (README, Console): GET /api/status,
 * /api/flow, /api/live (and its stream /api/live/stream), /api/csrf, /api/queues, /api/queues/<name> (the query of the queue page), /api/queues/<name>/entries/<key>,
 * /api/queues/<name>/schedules, /api/queues/<name>/breakers, /api/journal, /api/traces (?limit=), /api/traces/<trace id>; and the actions, POST /api/queues/<name>/<action>,
 * which server.ts lets through only after the operator checks.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BadInputError, NotFoundError } from '../../protocol/errors.js';
import { Code } from '../../protocol/codes.js';
import type { Result } from '../../protocol/message.js';
import { emptyMap, resultFromError } from '../../protocol/message.js';
import { journalAction } from './action-journal.js';
import { sendJson } from './http.js';
import { recentTraces, traceById } from '../../actors/observe/trace-ring.js';
import { tracingMode } from '../../actors/observe/tracing.js';
import { journalQueryOf, selectJournal } from './journal-query.js';
import type { Operators } from './operators.js';
import { CSRF_COOKIE, cookiesOf, newCsrfCookie } from './operators.js';
import type { ActionInput } from './queue-commands.js';
import { QUEUE_ACTIONS, isQueueAction, queueNamed, runAction } from './queue-commands.js';
import {
  allSummaries,
  breakersOf,
  fetchEntry,
  queueSummary,
  schedulesOf,
  searchEntries,
  searchOf,
} from './queue-reads.js';
import type { ConsoleSources } from './sources.js';
import type { NodeFlow } from './flow.js';
import type { LiveHistory } from './history.js';
import type { LiveStream } from './live-stream.js';
import { flowJson } from './flow-routes.js';

/** The actions a list's checked entries may take at once, and how many keys one request may name (a page shows PAGE_SIZE). */
const BULK_ACTIONS: ReadonlySet<string> = new Set(['replay', 'purge', 'delete', 'step']);
const MAX_BULK_KEYS = 100;

export class ConsoleApi {
  private readonly closers: Array<() => void> = [];

  constructor(
    readonly sources: ConsoleSources,
    private readonly history: LiveHistory,
    private readonly flow: NodeFlow,
    private readonly stream: LiveStream,
  ) {}

  /** Something to stop when the console closes (the live sampler, open streams). */
  onClose(closer: () => void): void {
    this.closers.push(closer);
  }

  close(): void {
    for (const c of this.closers.splice(0)) c();
  }

  async get(req: IncomingMessage, res: ServerResponse, parts: string[], url: URL, operators: Operators): Promise<void> {
    const [first, name, sub, key] = parts;
    if (first === 'status' && parts.length === 1) return sendJson(res, 200, this.sources.status());
    if (first === 'csrf' && parts.length === 1) {
      let cookie = cookiesOf(req).get(CSRF_COOKIE);
      const headers: Record<string, string> = {};
      if (!cookie) {
        cookie = newCsrfCookie();
        headers['set-cookie'] = `${CSRF_COOKIE}=${cookie}; Path=/; HttpOnly; SameSite=Strict`;
      }
      return sendJson(
        res,
        200,
        { token: operators.tokenFor(cookie), cookie: CSRF_COOKIE, header: 'x-csrf-token' },
        headers,
      );
    }
    if (first === 'flow' && parts.length === 1) return sendJson(res, 200, this.flow.json());
    if (first === 'live' && parts.length === 1) return sendJson(res, 200, this.history.series());
    if (first === 'live' && name === 'stream' && parts.length === 2) return this.stream.open(req, res);
    if (first === 'journal' && parts.length === 1)
      return sendJson(res, 200, selectJournal(this.sources.journal.entries(), journalQueryOf(url.searchParams)));
    if (first === 'queues') {
      if (name === undefined)
        return sendJson(
          res,
          200,
          (await allSummaries(this.sources)).map((q) => ({ ...q, rates: this.history.queueRates(q.name) })),
        );
      const queue = queueNamed(this.sources, name);
      if (sub === undefined) {
        const search = searchOf(url.searchParams);
        const [summary, page] = await Promise.all([
          queueSummary(this.sources, queue),
          searchEntries(this.sources, queue, search),
        ]);
        return sendJson(res, 200, { queue: summary, ...page });
      }
      if (sub === 'entries' && key !== undefined && parts.length === 4)
        return sendJson(res, 200, await fetchEntry(this.sources, queue, key));
      if (sub === 'schedules' && parts.length === 3) return sendJson(res, 200, await schedulesOf(this.sources, queue));
      if (sub === 'breakers' && parts.length === 3) return sendJson(res, 200, await breakersOf(this.sources, queue));
    }
    if (first === 'flows') return sendJson(res, 200, await flowJson(this.sources, parts, url));
    if (first === 'traces' && parts.length === 1)
      return sendJson(res, 200, {
        mode: tracingMode(),
        traces: recentTraces(Number(url.searchParams.get('limit') ?? 50) || 50),
      });
    if (first === 'traces' && name !== undefined && parts.length === 2) {
      const trace = traceById(name.toLowerCase());
      if (!trace) throw new NotFoundError(`no recent trace '${name}' on this node`);
      return sendJson(res, 200, trace);
    }
    throw new NotFoundError(`no API at /api/${parts.join('/')}; see the README, section Console`);
  }

  /** An operator's action: the queue's answer (a refusal of the input is its 400), written to the journal with the operator's name. */
  async act(queueName: string, action: string, input: ActionInput, user: string): Promise<Result> {
    if (!isQueueAction(action))
      throw new NotFoundError(`unknown queue action '${action}'; actions: ${Object.keys(QUEUE_ACTIONS).join(', ')}`);
    const queue = queueNamed(this.sources, queueName);
    const keys = input.control.key ?? [];
    if (keys.length > 1) return this.actOnEach(queue.name, action, keys, input, user);
    let result: Result;
    try {
      result = await runAction(this.sources, queue, action, input);
    } catch (e) {
      result = resultFromError(e);
    }
    journalAction(this.sources, user, { service: queue.name, action, input, result });
    return result;
  }

  /**
   * A bulk action (the checked entries of a list: several `key`s): the queue's command for each key in
   * turn, each journalled as its own action, answered as one — 200 when every key was done, else the
   * Code of the first refusal, with the keys done and those refused (and why) in Data.
   */
  private async actOnEach(
    queue: string,
    action: string,
    keys: readonly string[],
    input: ActionInput,
    user: string,
  ): Promise<Result> {
    if (!BULK_ACTIONS.has(action))
      throw new BadInputError(`${action} takes one key; several keys are taken by ${[...BULK_ACTIONS].join(', ')}`);
    if (keys.length > MAX_BULK_KEYS)
      throw new BadInputError(`at most ${MAX_BULK_KEYS} keys at once, got ${keys.length}`);
    if (new Set(keys).size !== keys.length) throw new BadInputError('a key is given twice');
    const done: string[] = [];
    const refused: Array<{ key: string; result: Result }> = [];
    for (const key of keys) {
      const result = await this.act(
        queue,
        action,
        { control: { ...input.control, key: [key] }, data: input.data },
        user,
      );
      if (result.Code >= 200 && result.Code < 300) done.push(key);
      else refused.push({ key, result });
    }
    const first = refused[0]?.result;
    const Data = emptyMap();
    if (done.length) Data.done = done;
    if (refused.length) Data.refused = refused.map((r) => `${r.key} (${r.result.Code} ${r.result.Message})`);
    return {
      Code: first ? first.Code : Code.Success,
      Message: `${action} of ${keys.length} entries: ${done.length} done${refused.length ? `, ${refused.length} refused` : ''}`,
      Data,
      List: null,
    };
  }
}
