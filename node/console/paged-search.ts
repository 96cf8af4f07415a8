/**
 * What the queue pages and the Flows pages share in a search (node/console/queue-reads.ts,
 * flow-reads.ts): its query parameters read and checked (a bad one is 400 naming it), and a page read
 * as the services answer it — `list` with `list_offset` / `list_limit` sends the keys of one page and
 * counts all that match, then each key of the page is fetched; a search by key is one `fetch`.
 */
import { BadInputError } from '../../protocol/errors.js';
import type { Result } from '../../protocol/message.js';

const PAGE_SIZE = 20;

/** The query parameters every search reads: the state tab, the page, and the optional ones by name. */
export function readSearch<Opt extends string>(
  params: URLSearchParams,
  states: readonly string[],
  defaultState: string,
  optional: ReadonlyArray<readonly [param: string, key: Opt]>,
): { state: string; page: number } & Partial<Record<Opt, string>> {
  const text = (name: string): string | undefined => {
    const v = params.get(name)?.trim();
    return v ? v : undefined;
  };
  const state = text('state') ?? defaultState;
  if (!states.includes(state)) throw new BadInputError(`state must be one of ${states.join(', ')}, got '${state}'`);
  const page = Number(text('page') ?? '1');
  if (!Number.isInteger(page) || page < 1)
    throw new BadInputError(`page must be a whole number from 1, got '${text('page') ?? ''}'`);
  const field = text('field');
  if (field !== undefined && text('value') === undefined)
    throw new BadInputError(`field '${field}' needs a value to search for`);
  const out = { state, page } as { state: string; page: number } & Partial<Record<Opt, string>>;
  for (const [param, key] of optional) {
    const v = text(param);
    if (v !== undefined) (out as Partial<Record<Opt, string>>)[key] = v;
  }
  return out;
}

/** One page of a search as the pages show it. */
export interface Page<V> {
  total: number;
  pages: number;
  items: V[];
}

/**
 * The page `page` of what `list` with `control` matches (the service's count of all of them in Data
 * `countField`), each key fetched and shown as `view`; with `key`, that one item alone. `command`
 * sends one of the service's commands and answers its Result; a failed `list` throws through `ok`.
 */
export async function readPage<V>(
  search: { key?: string; page: number },
  command: (name: 'list' | 'fetch', control: Record<string, string>) => Promise<Result>,
  list: { control: Record<string, string>; countField: string; ok: (r: Result) => Result },
  view: (r: Result) => V,
): Promise<Page<V>> {
  if (search.key !== undefined) {
    const r = await command('fetch', { key: search.key });
    const items = r.Code === 200 ? [view(r)] : [];
    return { total: items.length, pages: 1, items };
  }
  // the service sends the page's keys only (list_offset, list_limit) and counts the rest
  const listed = list.ok(
    await command('list', {
      ...list.control,
      list_offset: String((search.page - 1) * PAGE_SIZE),
      list_limit: String(PAGE_SIZE),
    }),
  );
  const shown = listed.Data.objects ?? [];
  const total = Number(listed.Data[list.countField]?.[0] ?? shown.length);
  const fetched = await Promise.all(shown.map((key) => command('fetch', { key })));
  // an item removed between the list and its fetch is simply not shown
  return {
    total,
    pages: Math.max(1, Math.ceil(total / PAGE_SIZE)),
    items: fetched.filter((r) => r.Code === 200).map(view),
  };
}
