/** Which page a path is, and the reads it is built from (the same the JSON API answers). */
import { NotFoundError } from '../../protocol/errors.js';
import { journalQueryOf, selectJournal } from './journal-query.js';
import type { Page, PageContext } from './layout.js';
import { entryBody } from './pages/entry.js';
import { journalBody } from './pages/journal.js';
import { LIVE_REFRESH_SECONDS, liveBody, liveSections } from './pages/live.js';
import { queueBody, queuesBody } from './pages/queues.js';
import { queueNamed } from './queue-commands.js';
import { allSummaries, fetchEntry, queueSummary, schedulesOf, searchEntries, searchOf } from './queue-reads.js';
import type { ConsoleSources } from './sources.js';

export class ConsolePages {
  constructor(private readonly sources: ConsoleSources) {}

  async build(parts: string[], url: URL, ctx: PageContext): Promise<Page> {
    const [first, name, sub, key] = parts;
    if (first === undefined) {
      const status = this.sources.status();
      return { title: 'Live', nav: '/', refreshSeconds: LIVE_REFRESH_SECONDS, body: liveBody(status, liveSections(status)) };
    }
    if (first === 'queues') {
      if (name === undefined) return { title: 'Queues', nav: '/queues', body: queuesBody(await allSummaries(this.sources)) };
      const queue = queueNamed(this.sources, name);
      if (sub === undefined) {
        const [summary, found, schedules] = await Promise.all([queueSummary(this.sources, queue), searchEntries(this.sources, queue, searchOf(url.searchParams)), schedulesOf(this.sources, queue)]);
        return { title: `Queue ${name}`, nav: '/queues', body: queueBody(ctx, summary, found, schedules) };
      }
      if (sub === 'entries' && key !== undefined && parts.length === 4) return { title: `Entry ${key}`, nav: '/queues', body: entryBody(ctx, name, await fetchEntry(this.sources, queue, key)) };
    }
    if (first === 'journal' && parts.length === 1) {
      const query = journalQueryOf(url.searchParams);
      return { title: 'Journal', nav: '/journal', body: journalBody(selectJournal(this.sources.journal.entries(), query), url.searchParams, this.sources.services().map((s) => s.name)) };
    }
    throw new NotFoundError(`no page at /${parts.join('/')}`);
  }
}
