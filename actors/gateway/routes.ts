/**
 * The `Routes` parameter (docs/ARCHITECTURE.md, Result shapes): `class[/operation]=channel` entries
 * separated by `;`, so one gateway fronts every service. The most specific entry wins
 * (class/operation over class); class and operation match without case.
 */
import { validateChannel } from '../hive/transport.js';
import { describeError } from '../../protocol/errors.js';

export interface RouteTable {
  /** The channel for a message, or `fallback` when no entry matches. */
  channelFor(cls: string, operation: string, fallback: string): string;
  readonly entries: ReadonlyArray<{ cls: string; operation?: string; channel: string }>;
}

/** Parses Routes; throws an Error naming the bad entry. */
export function parseRoutes(text: string): RouteTable {
  const exact = new Map<string, string>();
  const byClass = new Map<string, string>();
  const entries: { cls: string; operation?: string; channel: string }[] = [];
  for (const raw of text.split(';')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const m = /^([A-Za-z0-9_.-]+)(?:\/([A-Za-z0-9_.-]+))?\s*=\s*(\S+)$/.exec(entry);
    if (!m) throw new Error(`route '${entry}' is not of the form class[/operation]=channel`);
    const cls = m[1]!.toLowerCase();
    const op = m[2]?.toLowerCase();
    let channel: string;
    try {
      channel = validateChannel(m[3]!);
    } catch (e) {
      throw new Error(`route '${entry}': ${describeError(e)}`);
    }
    if (op === undefined) byClass.set(cls, channel);
    else exact.set(`${cls}/${op}`, channel);
    entries.push({ cls, ...(op === undefined ? {} : { operation: op }), channel });
  }
  return {
    entries,
    channelFor(cls, operation, fallback) {
      const c = cls.toLowerCase();
      return exact.get(`${c}/${operation.toLowerCase()}`) ?? byClass.get(c) ?? fallback;
    },
  };
}
