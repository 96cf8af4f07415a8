/**
 * The console: the node's dashboard port serves the pages (Live /, Flow /flow, Queues /queues,
 * Journal /journal, Config /config: config-routes.ts), the JSON API they are built from (/api/...), the Prometheus text (/metrics) and
 * its own assets — nothing is fetched from elsewhere. Reading needs nothing; actions are POSTs that
 * pass the operator checks (operators.ts), go to the queue as its own commands over the hive, and
 * are written to the supervision journal with the operator's name.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listenOn } from '../../actors/net/listen.js';
import {
  BadInputError,
  MisdirectedError,
  NotFoundError,
  UnauthorizedError,
  codeOf,
  describeError,
} from '../../protocol/errors.js';
import { allowedHosts, hostOf } from './hosts.js';
import { html } from './html.js';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.js';
import { ConsoleApi } from './api.js';
import { ownPath, parseActionBody, readBody, redirect, send, sendError, sendHtml } from './http.js';
import type { Page, PageContext } from './layout.js';
import { renderPage } from './layout.js';
import { CSRF_COOKIE, Operators, cookiesOf, newCsrfCookie } from './operators.js';
import { ConsolePages } from './pages.js';
import type { ConsoleSources } from './sources.js';
import { NodeFlow } from './flow.js';
import { flowAct } from './flow-reads.js';
import { LiveHistory } from './history.js';
import { LiveStream } from './live-stream.js';
import { ConfigRoutes } from './config-routes.js';

export interface ConsoleOptions {
  port: number;
  /** The address to bind: 127.0.0.1 unless configured otherwise. */
  host?: string;
  /** dashboard.Hosts: the names the console answers to (hosts.ts; default its address, localhost and the machine's names). */
  hosts?: string;
  /** The users file (dashboard.Users); without one the console is read-only. */
  users?: string;
  nodeName: string;
  version: string;
}

export interface RunningConsole {
  port: number;
  /** The address it is bound to. */
  address: string;
  close(): Promise<void>;
}

const REALM = 'hivenode console';

export async function startConsole(sources: ConsoleSources, opts: ConsoleOptions): Promise<RunningConsole> {
  const operators = new Operators(
    opts.users,
    (m) => sources.log.warn(`console: ${m}`),
    (m) => sources.log.warn(`console: ${m}`),
  );
  const history = new LiveHistory(sources);
  history.start();
  const flow = new NodeFlow(sources, history);
  const pages = new ConsolePages(sources, history, flow);
  const api = new ConsoleApi(sources, history, flow, new LiveStream(history, () => pages.liveSections()));
  const config = new ConfigRoutes(sources, operators);
  api.onClose(() => {
    history.stop();
    void operators.close();
  });

  const context = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<PageContext> => {
    let cookie = cookiesOf(req).get(CSRF_COOKIE);
    if (!cookie) {
      cookie = newCsrfCookie();
      res.setHeader('set-cookie', `${CSRF_COOKIE}=${cookie}; Path=/; HttpOnly; SameSite=Strict`);
    }
    const user = await operators.userOf(req);
    const notice = url.searchParams.get('done') ?? url.searchParams.get('failed');
    return {
      nodeName: opts.nodeName,
      version: opts.version,
      actionsEnabled: operators.actionsEnabled,
      ...(user === undefined ? {} : { user }),
      csrf: operators.tokenFor(cookie),
      here: url.pathname + url.search.replace(/[?&](done|failed)=[^&]*/g, '').replace(/^&/, '?'),
      ...(notice === null ? {} : { notice: { text: notice, failed: url.searchParams.has('failed') } }),
    };
  };

  const page = async (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    build: (ctx: PageContext) => Promise<Page>,
  ): Promise<void> => {
    const ctx = await context(req, res, url);
    sendHtml(res, 200, renderPage(ctx, await build(ctx)));
  };

  /** POST /api/queues/<name>/<action> (and /api/flows/…): checks in order (operator, origin, token), then the queue's command. */
  const act = async (
    req: IncomingMessage,
    res: ServerResponse,
    queue: string,
    action: string,
    kind: 'queues' | 'flows' = 'queues',
  ): Promise<void> => {
    const user = await operators.requireOperator(req);
    operators.requireSameOrigin(req);
    const body = parseActionBody(req.headers['content-type'], await readBody(req));
    operators.requireToken(req, body.csrf);
    const outcome =
      kind === 'flows'
        ? await flowAct(sources, queue, action, body.input, user)
        : await api.act(queue, action, body.input, user);
    if (!body.form) return send(res, outcome.Code, 'application/json; charset=utf-8', JSON.stringify(outcome));
    const back = body.back ?? `/${kind}/${encodeURIComponent(queue)}`;
    const text = `${action}: ${outcome.Code === 200 ? 'done' : `refused (${outcome.Code})`} — ${outcome.Message}${
      Object.keys(outcome.Data).length
        ? ` · ${Object.entries(outcome.Data)
            .map(([k, v]) => `${k} ${v.join(', ')}`)
            .join(', ')}`
        : ''
    }`;
    redirect(
      res,
      `${back}${back.includes('?') ? '&' : '?'}${outcome.Code === 200 ? 'done' : 'failed'}=${encodeURIComponent(text.slice(0, 300))}`,
    );
  };

  const hosts = allowedHosts(opts.host ?? '127.0.0.1', opts.hosts);
  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (hosts !== 'any' && !hosts.has(hostOf(req.headers.host)))
      throw new MisdirectedError(
        `this console does not answer to the host '${hostOf(req.headers.host).slice(0, 100)}' (dashboard.Hosts names those it does)`,
      );
    const url = new URL(req.url ?? '/', 'http://console');
    const path = url.pathname;
    let parts: string[];
    try {
      parts = path
        .split('/')
        .filter((p) => p !== '')
        .map(decodeURIComponent);
    } catch {
      throw new BadInputError(`the path ${path.slice(0, 100)} is not valid percent-encoding`);
    }
    if (req.method === 'POST') {
      if (parts[0] === 'api' && (parts[1] === 'queues' || parts[1] === 'flows') && parts.length === 4)
        return act(req, res, parts[2]!, parts[3]!, parts[1]);
      if (parts[0] === 'api' && parts[1] === 'config' && parts.length === 3)
        return config.post(req, res, parts[2]!, () => context(req, res, url));
      throw new NotFoundError(
        `nothing to POST at ${path}: actions are POST /api/queues/<name>/<action>, /api/flows/<name>/<action> and /api/config/<action>`,
      );
    }
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return send(res, 405, 'text/plain; charset=utf-8', 'GET or POST only', { allow: 'GET, HEAD, POST' });
    if (path === '/assets/console.css')
      return send(res, 200, 'text/css; charset=utf-8', CONSOLE_CSS, { 'cache-control': 'max-age=300' });
    if (path === '/assets/console.js')
      return send(res, 200, 'text/javascript; charset=utf-8', CONSOLE_JS, { 'cache-control': 'max-age=300' });
    if (path === '/metrics') return send(res, 200, sources.metrics.contentType, await sources.metrics.text());
    if (path === '/login') return login(req, res, url);
    if (parts[0] === 'api' && parts[1] === 'config') return config.get(res, parts.slice(1));
    if (parts[0] === 'api') return api.get(req, res, parts.slice(1), url, operators);
    if (parts[0] === 'config') return page(req, res, url, (ctx) => config.page(parts, ctx));
    return page(req, res, url, (ctx) => pages.build(parts, url, ctx));
  };

  /** /login asks the browser for Basic credentials (401 with a challenge) until it sends valid ones, then goes back. */
  const login = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const user = await operators.userOf(req);
    if (user !== undefined) return redirect(res, ownPath(url.searchParams.get('back') ?? '/'));
    if (!operators.actionsEnabled)
      return sendHtml(
        res,
        403,
        renderPage(await context(req, res, url), {
          title: 'Sign in',
          nav: '/',
          body: html`<h1>Sign in</h1><p>This console is read-only: there is nobody to sign in as.</p>`,
        }),
      );
    // thrown, so a browser gets a page saying it (the challenge with it), a script JSON
    throw new UnauthorizedError(
      req.headers.authorization
        ? 'wrong user or password: sign in with a user of dashboard.Users'
        : 'sign in with a user of dashboard.Users',
    );
  };

  const server: Server = createServer((req, res) => {
    route(req, res).catch((e: unknown) => {
      if (res.headersSent) return res.destroy();
      // a browser (a page that fails: an unknown queue or entry, a bad search; a form refused) gets a
      // page saying so; scripts get JSON. A 401 carries the challenge either way, so the browser asks.
      const code = codeOf(e);
      const challenge: Record<string, string> =
        code === 401 ? { 'www-authenticate': `Basic realm="${REALM}", charset="UTF-8"` } : {};
      if ((req.headers.accept ?? '').includes('text/html')) {
        return sendHtml(
          res,
          code,
          html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${code} · hivenode console</title><link rel="stylesheet" href="/assets/console.css"></head><body><main id="main"><h1>${code}</h1><p>${describeError(e)}</p><p><a href="/">back to the console</a></p></main></body></html>`
            .text,
          challenge,
        );
      }
      sendError(res, e, REALM);
    });
  });
  try {
    await listenOn(server, { service: 'dashboard', port: opts.port, host: opts.host ?? '127.0.0.1' });
  } catch (e) {
    api.close();
    throw e;
  }
  return {
    port: (server.address() as AddressInfo).port,
    address: (server.address() as AddressInfo).address,
    close: () =>
      new Promise<void>((resolve) => {
        api.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
