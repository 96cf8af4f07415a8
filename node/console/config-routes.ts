/**
 * The Config page's requests (README, Changing a running node; Console): reading — the page /config,
 * /config/versions/<n>, GET /api/config and /api/config/versions/<n> — needs nothing, as every page;
 * the actions — POST /api/config/dry-run, /apply, /restore and /reload — pass the operator checks of
 * every action (operators.ts: an operator of dashboard.Users, the same origin, the CSRF token), even
 * the dry run, which compiles the operator's text (templates, TLS files) on the node. A form gets the
 * page back (a dry run's result, a refusal with the text kept) or a redirect with the outcome; a
 * script gets JSON with the Code as the HTTP status.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BadInputError, NotFoundError } from '../../protocol/errors.js';
import { JournalEvent } from '../../supervisors/journal.js';
import { lineDiff } from '../line-diff.js';
import { html } from './html.js';
import { readBody, redirect, sendHtml, sendJson } from './http.js';
import type { Page, PageContext } from './layout.js';
import { renderPage } from './layout.js';
import type { Operators } from './operators.js';
import { CSRF_FIELD } from './operators.js';
import type { ConfigView } from './pages/config.js';
import { configBody, versionBody } from './pages/config.js';
import type { ConfigOutcome, ConsoleConfig, ConsoleSources } from './sources.js';

const ACTIONS = ['dry-run', 'apply', 'restore', 'reload'] as const;
type ConfigAction = (typeof ACTIONS)[number];

/** The body of a config action: JSON `{text, base}` / `{version}` (scripts) or a form. */
interface ConfigBody {
  text?: string;
  base?: string;
  version?: number;
  csrf?: string;
  form: boolean;
}

function parseConfigBody(contentType: string | undefined, raw: string): ConfigBody {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  let fields: Record<string, unknown>;
  let form = false;
  if (type === 'application/x-www-form-urlencoded') {
    fields = Object.fromEntries(new URLSearchParams(raw));
    form = true;
  } else if (type === 'application/json' || (type === '' && raw.trim() === '')) {
    let body: unknown;
    try {
      body = raw.trim() === '' ? {} : JSON.parse(raw);
    } catch {
      throw new BadInputError('the body is not valid JSON: send {"text": "<the node file>"} or {"version": 1}');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new BadInputError(
        'the body must be a JSON object: {"text": "<the node file>", "base": "<hash>"} or {"version": 1}',
      );
    fields = body as Record<string, unknown>;
  } else {
    throw new BadInputError(`content-type '${type}' is not accepted: send a form or application/json`);
  }
  const known = ['text', 'base', 'version', CSRF_FIELD];
  const unknown = Object.keys(fields).find((k) => !known.includes(k));
  if (unknown !== undefined)
    throw new BadInputError(
      `unknown field '${unknown.slice(0, 40)}': a config action takes text (and base) or version`,
    );
  const str = (k: string): string | undefined => {
    const v = fields[k];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw new BadInputError(`${k} must be a string`);
    return v;
  };
  const versionText = fields.version === undefined ? undefined : String(fields.version);
  if (versionText !== undefined && !/^[1-9]\d*$/.test(versionText))
    throw new BadInputError(
      `version must be a number from 1 (the newest kept version), got '${versionText.slice(0, 20)}'`,
    );
  const out: ConfigBody = { form };
  const text = str('text');
  const base = str('base');
  const csrf = str(CSRF_FIELD);
  if (text !== undefined) out.text = form ? text.replace(/\r\n/g, '\n') : text;
  if (base !== undefined && base !== '') out.base = base;
  if (csrf !== undefined) out.csrf = csrf;
  if (versionText !== undefined) out.version = Number(versionText);
  return out;
}

/** The HTTP status of an outcome: 200 applied, 409 a conflicting edit, 400 refused. */
const statusOf = (o: ConfigOutcome): number => (o.applied ? 200 : o.conflict ? 409 : 400);

export class ConfigRoutes {
  constructor(
    private readonly sources: ConsoleSources,
    private readonly operators: Operators,
  ) {}

  private control(): ConsoleConfig {
    const c = this.sources.config();
    if (!c)
      throw new NotFoundError(
        'this node was not started from a node file (hivenode run <file>): there is no file to show or change',
      );
    return c;
  }

  /** The page's data: the running file, the kept versions and the reloads of the journal (newest first). */
  private async view(extra: Partial<ConfigView> = {}): Promise<ConfigView> {
    const c = this.control();
    const running = await c.running();
    const source = this.sources.status().source;
    return {
      file: c.file,
      hash: running.hash,
      ...(source ? { appliedAt: source.appliedAt, reloads: source.reloads } : {}),
      diskChanged: running.diskChanged,
      text: running.text,
      versions: c.versions(),
      history: this.sources.journal
        .entries()
        .filter((e) => e.event === JournalEvent.Reload)
        .reverse(),
      ...extra,
    };
  }

  /** GET /config and /config/versions/<n>. */
  async page(parts: string[], ctx: PageContext): Promise<Page> {
    if (parts.length === 1 && !this.sources.config())
      return {
        title: 'Config',
        nav: '/config',
        body: html`<h1>Config</h1><p id="config-none">This node was not started from a node file, so there is no file to show or change here: run it with <code>hivenode run &lt;file&gt;</code> to change it while it runs (README, Changing a running node).</p>`,
      };
    if (parts.length === 1) return { title: 'Config', nav: '/config', body: configBody(ctx, await this.view()) };
    if (parts.length === 3 && parts[1] === 'versions') {
      const c = this.control();
      const n = Number(parts[2]);
      const text = await c.version(n);
      return {
        title: `Config version .${n}`,
        nav: '/config',
        body: versionBody(ctx, c.file, n, text, lineDiff((await c.running()).text, text)),
      };
    }
    throw new NotFoundError(`no page at /${parts.join('/')}`);
  }

  /** GET /api/config and /api/config/versions/<n>. */
  async get(res: ServerResponse, parts: string[]): Promise<void> {
    if (parts.length === 1) {
      const v = await this.view();
      return sendJson(res, 200, {
        file: v.file,
        hash: v.hash,
        appliedAt: v.appliedAt,
        reloads: v.reloads,
        diskChanged: v.diskChanged,
        text: v.text,
        versions: v.versions,
        history: v.history,
      });
    }
    if (parts.length === 3 && parts[1] === 'versions') {
      const c = this.control();
      return sendJson(res, 200, { version: Number(parts[2]), text: await c.version(Number(parts[2])) });
    }
    throw new NotFoundError(`no API at /api/${parts.join('/')}`);
  }

  /** POST /api/config/<action>: the operator checks in order (operator, origin, token), then the action. */
  async post(
    req: IncomingMessage,
    res: ServerResponse,
    action: string,
    contextOf: () => Promise<PageContext>,
  ): Promise<void> {
    if (!(ACTIONS as readonly string[]).includes(action))
      throw new NotFoundError(`unknown config action '${action.slice(0, 40)}'; actions: ${ACTIONS.join(', ')}`);
    const user = await this.operators.requireOperator(req);
    this.operators.requireSameOrigin(req);
    const body = parseConfigBody(req.headers['content-type'], await readBody(req));
    this.operators.requireToken(req, body.csrf);
    const c = this.control();
    const a = action as ConfigAction;
    if (a === 'dry-run') {
      const check = await c.dryRun(this.needText(body));
      if (!body.form) return sendJson(res, 200, check);
      return sendHtml(res, 200, await this.render(contextOf, { text: body.text!, check }));
    }
    let outcome: ConfigOutcome;
    if (a === 'apply') outcome = await c.apply(this.needText(body), user, body.base);
    else if (a === 'restore') {
      if (body.version === undefined)
        throw new BadInputError('restore needs version: the kept version to apply (1 is the newest)');
      outcome = await c.restore(body.version, user);
    } else outcome = await c.reloadFromDisk(user);
    if (!body.form) return sendJson(res, statusOf(outcome), outcome);
    if (outcome.applied)
      return redirect(
        res,
        `/config?done=${encodeURIComponent(`${a === 'restore' ? `restored .${body.version}` : a === 'reload' ? 'reloaded from disk' : 'applied'}: ${outcome.summary}`.slice(0, 300))}`,
      );
    // refused: the page again, with the reason and the operator's text kept to fix it
    sendHtml(
      res,
      statusOf(outcome),
      await this.render(contextOf, {
        refused: outcome,
        ...(a === 'apply' && body.text !== undefined ? { text: body.text } : {}),
      }),
    );
  }

  private needText(body: ConfigBody): string {
    if (body.text === undefined) throw new BadInputError('the node file is missing: send it as text');
    return body.text;
  }

  /** The Config page with a dry run's result or a refusal, framed as every page. */
  private async render(contextOf: () => Promise<PageContext>, extra: Partial<ConfigView>): Promise<string> {
    const [ctx, view] = await Promise.all([contextOf(), this.view(extra)]);
    return renderPage(ctx, { title: 'Config', nav: '/config', body: configBody(ctx, view) });
  }
}
