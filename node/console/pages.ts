/** Which page a path is, and the reads it is built from (the same the JSON API answers). */
import { NotFoundError, codeOf } from '../../protocol/errors.js';
import { journalQueryOf, selectJournal } from './journal-query.js';
import type { Page, PageContext } from './layout.js';
import { entryBody } from './pages/entry.js';
import { journalBody } from './pages/journal.js';
import { LIVE_REFRESH_SECONDS, liveBody, liveSections } from './pages/live.js';
import { queueBody, queuesBody } from './pages/queues.js';
import { queueNamed } from './queue-commands.js';
import {
  allSummaries,
  breakersOf,
  deadReasons,
  fetchEntry,
  queueSummary,
  schedulesOf,
  searchEntries,
  searchOf,
} from './queue-reads.js';
import type { ConsoleSources } from './sources.js';
import type { NodeFlow } from './flow.js';
import { servicesHealth } from './health.js';
import type { LiveHistory } from './history.js';
import type { Html } from './html.js';
import { html } from './html.js';
import { liveCharts, serviceCharts } from './pages/live-charts.js';
import { queueGlanceOf, recent } from './pages/glance.js';
import { FLOW_REFRESH_SECONDS, flowBody } from './pages/flow.js';
import { serviceBody } from './pages/service.js';
import { traceBody, tracesBody } from './pages/traces.js';
import { flowPage } from './flow-routes.js';
import { recentTraces, traceById } from '../../actors/observe/trace-ring.js';
import { tracingMode } from '../../actors/observe/tracing.js';

export class ConsolePages {
  constructor(
    private readonly sources: ConsoleSources,
    private readonly history: LiveHistory,
    private readonly flow: NodeFlow,
  ) {}

  /** The live page's sections (the page, and each event of its stream). */
  liveSections(): Record<string, Html> {
    const status = this.sources.status();
    const series = this.history.series();
    const health = servicesHealth(this.sources, this.history);
    const queues = status.services
      .filter((s) => s.kind === 'queue')
      .map((s) => queueGlanceOf(s.name, s.status, this.history.queueRates(s.name)));
    const failures = status.services.reduce((n, s) => n + (this.history.latest(s.name)?.failures ?? 0), 0);
    const rates = new Map(series.services.map((s) => [s.name, recent(s.rate)]));
    return liveSections({
      status,
      charts: liveCharts(series),
      health,
      rateOf: (name) => rates.get(name),
      queues,
      glance: {
        series,
        health,
        queues,
        failures,
        hive: { kind: String(status.hive.kind), connected: status.hive.connected === true },
      },
    });
  }

  async build(parts: string[], url: URL, ctx: PageContext): Promise<Page> {
    const [first, name, sub, key] = parts;
    if (first === undefined) {
      const status = this.sources.status();
      return {
        title: 'Live',
        nav: '/',
        refreshSeconds: LIVE_REFRESH_SECONDS,
        body: liveBody(status, this.liveSections()),
      };
    }
    if (first === 'flow' && parts.length === 1) {
      const { graph, svg, live } = await this.flow.render();
      return {
        title: 'Flow',
        nav: '/flow',
        refreshSeconds: FLOW_REFRESH_SECONDS,
        body: flowBody(graph, svg, live, this.sources.nodes(), this.sources.hive.kind),
      };
    }
    if (first === 'services' && name !== undefined && parts.length === 2) {
      const status = this.sources.status();
      if (!status.services.some((s) => s.name === name))
        throw new NotFoundError(`no service named '${name}' on this node`);
      const series = this.history.series();
      const own = series.services.find((s) => s.name === name);
      return {
        title: `Service ${name}`,
        nav: '/flow',
        refreshSeconds: LIVE_REFRESH_SECONDS,
        body: serviceBody(
          status,
          name,
          servicesHealth(this.sources, this.history).get(name),
          own ? serviceCharts(own, series.times) : html``,
        ),
      };
    }
    if (first === 'queues') {
      if (name === undefined)
        return {
          title: 'Queues',
          nav: '/queues',
          body: queuesBody(
            (await allSummaries(this.sources)).map((q) => ({ ...q, rates: this.history.queueRates(q.name) })),
          ),
        };
      const queue = queueNamed(this.sources, name);
      if (sub === undefined) {
        const search = searchOf(url.searchParams);
        const [summary, found, schedules, reasons, breakers] = await Promise.all([
          queueSummary(this.sources, queue),
          searchEntries(this.sources, queue, search),
          schedulesOf(this.sources, queue),
          search.state === 'dead' ? deadReasons(this.sources, queue) : [],
          breakersOf(this.sources, queue),
        ]);
        return {
          title: `Queue ${name}`,
          nav: '/queues',
          body: queueBody(ctx, { ...summary, rates: this.history.queueRates(name) }, found, {
            schedules,
            reasons,
            breakers,
          }),
        };
      }
      if (sub === 'entries' && key !== undefined && parts.length === 4) {
        let entry;
        try {
          entry = await fetchEntry(this.sources, queue, key);
        } catch (e) {
          if (codeOf(e) !== 404) throw e;
          // an action's redirect comes back here (a replayed entry delivered, a purged one): the page says
          // where the entry went, with the action's notice, instead of a bare 404
          return {
            title: `Entry ${key}`,
            nav: '/queues',
            body: html`<h1>Entry <code>${key}</code></h1><p id="entry-gone">This entry is no longer in queue <a href="/queues/${encodeURIComponent(name)}">${name}</a>: delivered (a queue keeps delivered entries only with DoneRetention), purged or deleted.</p>`,
          };
        }
        return { title: `Entry ${key}`, nav: '/queues', body: entryBody(ctx, name, entry) };
      }
    }
    if (first === 'flows') return flowPage(this.sources, parts, url, ctx);
    if (first === 'journal' && parts.length === 1) {
      const query = journalQueryOf(url.searchParams);
      return {
        title: 'Journal',
        nav: '/journal',
        body: journalBody(
          selectJournal(this.sources.journal.entries(), query),
          url.searchParams,
          this.sources.services().map((s) => s.name),
        ),
      };
    }
    if (first === 'traces') {
      if (name === undefined) {
        const id = (url.searchParams.get('id') ?? '').trim().toLowerCase();
        // a trace id from a log line goes straight to its trace
        if (id !== '' && traceById(id)) return this.build(['traces', id], url, ctx);
        return { title: 'Traces', nav: '/traces', body: tracesBody(recentTraces(200), id, tracingMode(), id !== '') };
      }
      if (parts.length === 2) {
        const trace = traceById(name.toLowerCase());
        if (!trace)
          throw new NotFoundError(
            `no recent trace '${name}' on this node (the ring keeps the latest 200 sampled traces)`,
          );
        return { title: `Trace ${trace.traceId}`, nav: '/traces', body: traceBody(trace) };
      }
    }
    throw new NotFoundError(`no page at /${parts.join('/')}`);
  }
}
