/** A map step's elements from its rendered `items` (README, Flows): a JSON array, else one element per non-empty line. */
import { BadInputError } from '../../protocol/errors.js';

/** The most elements one map step sends. */
const MAX_MAP_ITEMS = 100_000;

export function mapItems(rendered: string): unknown[] {
  const text = rendered.trim();
  let items: unknown[];
  if (text.startsWith('[')) {
    try {
      items = JSON.parse(text) as unknown[];
    } catch (e) {
      throw new BadInputError(
        `items rendered text starting with '[' that is not a JSON array: ${(e as Error).message}`,
      );
    }
    if (!Array.isArray(items)) throw new BadInputError('items rendered JSON that is not an array');
  } else items = text === '' ? [] : text.split(/\r?\n/).filter((l) => l.trim() !== '');
  if (items.length > MAX_MAP_ITEMS)
    throw new BadInputError(`items rendered ${items.length} elements; a map step sends at most ${MAX_MAP_ITEMS}`);
  return items;
}
