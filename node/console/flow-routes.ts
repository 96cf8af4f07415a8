/**
 * The Flows pages and their JSON (README, Console): /flows, /flows/<name> (the query of the runs page:
 * state, key, step, code, field + value, older_than, newer_than, page), /flows/<name>/runs/<key>; the
 * same under /api/flows for scripts. Reads only: the actions go through server.ts's operator checks.
 */
import { NotFoundError, codeOf } from '../../protocol/errors.js';
import { html } from './html.js';
import type { Page, PageContext } from './layout.js';
import { allFlowSummaries, fetchRun, flowNamed, flowSummary, runSearchOf, searchRuns } from './flow-reads.js';
import { flowRunsBody, flowsBody, runBody } from './pages/flows.js';
import type { ConsoleSources } from './sources.js';

export async function flowPage(sources: ConsoleSources, parts: string[], url: URL, ctx: PageContext): Promise<Page> {
  const [, name, sub, key] = parts;
  if (name === undefined) return { title: 'Flows', nav: '/flows', body: flowsBody(await allFlowSummaries(sources)) };
  const flow = flowNamed(sources, name);
  if (sub === undefined && parts.length === 2) {
    const search = runSearchOf(url.searchParams);
    const [summary, found] = await Promise.all([flowSummary(sources, flow), searchRuns(sources, flow, search)]);
    return { title: `Flow ${name}`, nav: '/flows', body: flowRunsBody(summary, found) };
  }
  if (sub === 'runs' && key !== undefined && parts.length === 4) {
    try {
      return { title: `Run ${key}`, nav: '/flows', body: runBody(ctx, name, await fetchRun(sources, flow, key)) };
    } catch (e) {
      if (codeOf(e) !== 404) throw e;
      // an action's redirect may come back to a run purged meanwhile: say where it went, with the notice
      return {
        title: `Run ${key}`,
        nav: '/flows',
        body: html`<h1>Run <code>${key}</code></h1><p id="run-gone">This run is no longer kept by flow <a href="/flows/${encodeURIComponent(name)}">${name}</a>: purged, or past RunRetention.</p>`,
      };
    }
  }
  throw new NotFoundError(`no page at /${parts.join('/')}`);
}

/** GET /api/flows[/<name>[/runs/<key>]]: what the pages show, as JSON. */
export async function flowJson(sources: ConsoleSources, parts: string[], url: URL): Promise<unknown> {
  const [, name, sub, key] = parts;
  if (name === undefined) return allFlowSummaries(sources);
  const flow = flowNamed(sources, name);
  if (sub === undefined && parts.length === 2) {
    const search = runSearchOf(url.searchParams);
    const [summary, found] = await Promise.all([flowSummary(sources, flow), searchRuns(sources, flow, search)]);
    return { flow: summary, ...found };
  }
  if (sub === 'runs' && key !== undefined && parts.length === 4) return fetchRun(sources, flow, key);
  throw new NotFoundError(`no API at /api/${parts.join('/')}; see the README, section Console`);
}
