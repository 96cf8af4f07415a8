/**
 * The `Routes` parameter (docs/ARCHITECTURE.md, Result shapes): `pattern=channel` entries separated
 * by `;`, so one gateway fronts every service. Patterns and their precedence are route-patterns.ts's
 * (class/operation over the class over `*`); a request no entry matches goes to OUTPUTCHANNEL.
 */
import { validateChannel } from '../hive/transport.js';
import type { PatternEntry } from './route-patterns.js';
import { parsePatternTable } from './route-patterns.js';

export interface RouteTable {
  /** The channel for a message, or `fallback` when no entry matches. */
  channelFor(cls: string, operation: string, fallback: string): string;
  readonly entries: ReadonlyArray<PatternEntry<string>>;
}

/** Parses Routes; throws an Error naming the bad entry. */
export function parseRoutes(text: string): RouteTable {
  const table = parsePatternTable(text, 'class[/operation]=channel', validateChannel);
  return {
    entries: table.entries,
    channelFor: (cls, operation, fallback) => table.match(cls, operation)?.value ?? fallback,
  };
}
