/**
 * Authorization per route (`Access` and `Groups`): `pattern=group1,group2;…` entries, patterns and
 * precedence as in Routes (route-patterns.ts: class/operation over the class over `*`). The most
 * specific entry alone decides: a user in one of its groups may use the route, anyone else gets 403.
 * The group `*` means any authenticated user. A route no entry matches is denied: with Access set,
 * only what it names is open. The user comes from the authentication outcome (auth.ts's AuthOutcome),
 * never from a header, so any way of proving who one is composes with this check.
 */
import { ConfigError } from '../../protocol/errors.js';
import type { Logger } from '../shared/logger.js';
import { WatchedFile } from '../shared/watched-file.js';
import type { Groups } from './groups.js';
import { parseGroups } from './groups.js';
import type { PatternEntry, PatternTable } from './route-patterns.js';
import { parsePatternTable } from './route-patterns.js';

/** Access's group meaning any authenticated user. */
export const ANY_USER = '*';
const GROUP = /^[^\s:#,;=]+$/;

export interface AccessRule {
  /** The groups named, `*` included when written. */
  readonly groups: readonly string[];
}

export type AccessTable = PatternTable<AccessRule>;

export type AccessDecision = { allowed: true } | { allowed: false; route: string; entry: PatternEntry<AccessRule> | undefined };

/** Parses Access; throws an Error naming the bad entry. */
export function parseAccess(text: string): AccessTable {
  return parsePatternTable(text, 'pattern=group1,group2 (pattern: class/operation, class/*, class or *)', (raw) => {
    const groups = raw.split(',').map((g) => g.trim());
    if (raw === '') throw new Error('names no group (a group no one is in, defined in the groups file, denies everyone)');
    const bad = groups.find((g) => !GROUP.test(g));
    if (bad !== undefined) throw new Error(`'${bad}' is not a group name`);
    return { groups };
  });
}

/** Every group the table names, '*' left out (it needs no groups file). */
export function namedGroups(table: AccessTable): string[] {
  return [...new Set(table.entries.flatMap((e) => e.value.groups))].filter((g) => g !== ANY_USER);
}

export class Authorizer {
  constructor(
    private readonly table: AccessTable,
    /** The groups file's latest good version (a WatchedFile); none when Access names only '*'. */
    private readonly groups: { get(): Groups } | undefined,
  ) {}

  /** Whether `user` (authenticated) may use the route class/operation. */
  decide(user: string, cls: string, operation: string): AccessDecision {
    const entry = this.table.match(cls, operation);
    const allowed = entry !== undefined && this.member(user, entry.value.groups);
    return allowed ? { allowed } : { allowed, route: `${cls}/${operation}`, entry };
  }

  private member(user: string, groups: readonly string[]): boolean {
    if (groups.includes(ANY_USER)) return true;
    const mine = this.groups?.get().ofUser.get(user);
    return mine !== undefined && groups.some((g) => mine.has(g));
  }
}

/**
 * The authorizer of a gateway whose Access is set: reads the groups file (a start error when it
 * cannot be read or parsed, or lacks a group Access names) and watches it; a later version lacking
 * such a group is taken (it is the authority on membership) with a warning, and a bad one is logged
 * and the groups read before are kept.
 */
export function openAccess(table: AccessTable, groupsFile: string, log: Logger, recheckMs?: number): Authorizer {
  const named = namedGroups(table);
  if (groupsFile === '') return new Authorizer(table, undefined);
  let started = false;
  const groups = new WatchedFile(
    groupsFile,
    (text, file) => {
      const parsed = parseGroups(text, file);
      const missing = named.filter((g) => !parsed.names.has(g));
      if (missing.length > 0) {
        const what = `Access names ${missing.map((g) => `'${g}'`).join(', ')}, which groups file '${file}' does not define`;
        if (!started) throw new ConfigError(`${what}; define ${missing.length === 1 ? 'it' : 'them'} there (a group with no members denies everyone) or correct Access`);
        log.warn(`${what}: no one is in ${missing.length === 1 ? 'it' : 'them'} until the file defines ${missing.length === 1 ? 'it' : 'them'} again`);
      }
      return parsed;
    },
    { param: 'Groups', kind: 'groups file', onReloadError: (m) => log.error(m), ...(recheckMs === undefined ? {} : { recheckMs }) },
  );
  started = true;
  return new Authorizer(table, groups);
}
