/**
 * Authorization per route (`Access` and `Groups`): `pattern=group1,group2;…` entries, patterns and
 * precedence as in Routes (route-patterns.ts: class/operation over the class over `*`). The most
 * specific entry alone decides: a user in one of its groups may use the route, anyone else gets 403.
 * The group `*` means any authenticated user. A route no entry matches is denied: with Access set,
 * only what it names is open. The user comes from the authentication outcome (auth.ts's AuthOutcome),
 * never from a header, so any way of proving who one is composes with this check.
 */
import { ConfigError } from '../../protocol/errors.js';
import type { Logger } from '../observe/logger.js';
import { WatchedFile } from '../net/watched-file.js';
import type { Groups } from '../auth/groups.js';
import { parseGroups } from '../auth/groups.js';
import type { PatternEntry, PatternTable } from './route-patterns.js';
import { parsePatternTable } from './route-patterns.js';
import { DEFAULT_COMMAND, canonicalCommand } from '../../protocol/commands.js';

/** Access's group meaning any authenticated user. */
const ANY_USER = '*';
const GROUP = /^[^\s:#,;=]+$/;
/** An entry's key: a route pattern, then `:` and the commands it grants (optional). */
const KEY = /^\s*([^:=;]+?)\s*(?::\s*([A-Za-z0-9_,\s-]*?))?\s*=(.*)$/;
const COMMAND = /^[a-z0-9_-]+$/;

interface AccessRule {
  /** The groups named, `*` included when written. */
  readonly groups: readonly string[];
}

/**
 * Access parsed: the entries without a command part (they cover every command of their route) and,
 * per canonical command, the entries naming it. A pattern may appear once plain and once per command.
 */
export interface AccessTable {
  readonly plain: PatternTable<AccessRule>;
  readonly byCommand: ReadonlyMap<string, PatternTable<AccessRule>>;
  /** Every entry as written, for messages and the groups file check. */
  readonly entries: ReadonlyArray<PatternEntry<AccessRule> & { readonly commands?: readonly string[] }>;
}

export type AccessDecision =
  { allowed: true } | { allowed: false; route: string; command: string; entry: PatternEntry<AccessRule> | undefined };

const parseGroupList = (raw: string): AccessRule => {
  const groups = raw.split(',').map((g) => g.trim());
  if (raw === '') throw new Error('names no group (a group no one is in, defined in the groups file, denies everyone)');
  const bad = groups.find((g) => !GROUP.test(g));
  if (bad !== undefined) throw new Error(`'${bad}' is not a group name`);
  return { groups };
};

/** Parses Access (`pattern[:command,…]=group,…;…`); throws an Error naming the bad entry. */
export function parseAccess(text: string): AccessTable {
  const form = 'pattern[:command,…]=group1,group2 (pattern: class/operation, class/*, class or *)';
  const plain: string[] = [];
  const perCommand = new Map<string, string[]>();
  const entries: Array<PatternEntry<AccessRule> & { commands?: readonly string[] }> = [];
  for (const raw of text.split(';')) {
    const written = raw.trim();
    if (written === '') continue;
    const m = KEY.exec(written);
    if (!m) throw new Error(`entry '${written}' is not of the form ${form}`);
    const [, pattern, commandText, groups] = m as unknown as [string, string, string | undefined, string];
    if (commandText === undefined) {
      plain.push(`${pattern}=${groups}`);
      entries.push({ pattern, value: parseGroupListIn(written, groups) });
      continue;
    }
    const commands = [
      ...new Set(
        commandText
          .split(',')
          .map((c) => c.trim())
          .filter((c) => c !== '')
          .map((c) => canonicalCommand(c)),
      ),
    ];
    if (commands.length === 0) throw new Error(`entry '${written}' names no command after ':'`);
    const bad = commands.find((c) => !COMMAND.test(c));
    if (bad !== undefined) throw new Error(`entry '${written}': '${bad}' is not a command name`);
    for (const c of commands) perCommand.set(c, [...(perCommand.get(c) ?? []), `${pattern}=${groups}`]);
    entries.push({ pattern, value: parseGroupListIn(written, groups), commands });
  }
  const table = (list: string[], what: string): PatternTable<AccessRule> => {
    try {
      return parsePatternTable(list.join(';'), form, parseGroupList);
    } catch (e) {
      throw new Error(`${(e as Error).message}${what}`);
    }
  };
  const byCommand = new Map<string, PatternTable<AccessRule>>();
  for (const [c, list] of perCommand) byCommand.set(c, table(list, ` (for command '${c}')`));
  return { plain: table(plain, ''), byCommand, entries };
}

function parseGroupListIn(written: string, raw: string): AccessRule {
  try {
    return parseGroupList(raw.trim());
  } catch (e) {
    throw new Error(`entry '${written}': ${(e as Error).message}`);
  }
}

/** Every group the table names, '*' left out (it needs no groups file). */
export function namedGroups(table: AccessTable): string[] {
  return [...new Set(table.entries.flatMap((e) => e.value.groups))].filter((g) => g !== ANY_USER);
}

/** How specific a matched pattern is: class/operation (3) over the class (2) over `*` (1). */
function specificity(pattern: string): number {
  if (pattern === '*') return 1;
  const slash = pattern.indexOf('/');
  return slash < 0 || pattern.slice(slash + 1) === '*' ? 2 : 3;
}

export class Authorizer {
  constructor(
    private readonly table: AccessTable,
    /** The groups file's latest good version (a WatchedFile); none when Access names only '*'. */
    private readonly groups: { get(): Groups } | undefined,
  ) {}

  /**
   * Whether `user` (authenticated) may run `command` (a `command` control's value; DEFAULT_COMMAND
   * when the request has none) on the route class/operation. The entries that apply are those without
   * a command part and those naming the command; the most specific pattern among them decides, and
   * where a plain entry and a command entry share that pattern, either's groups allow it.
   * `tokenGroups` are the groups of a Bearer token's groups claim, counted as the file's are.
   */
  decide(
    user: string,
    cls: string,
    operation: string,
    command: string = DEFAULT_COMMAND,
    tokenGroups?: ReadonlySet<string>,
  ): AccessDecision {
    const wanted = canonicalCommand(command);
    const plain = this.table.plain.match(cls, operation);
    const named = this.table.byCommand.get(wanted)?.match(cls, operation);
    const level = Math.max(plain ? specificity(plain.pattern) : 0, named ? specificity(named.pattern) : 0);
    const deciding = [plain, named].filter(
      (e): e is PatternEntry<AccessRule> => e !== undefined && specificity(e.pattern) === level,
    );
    if (deciding.some((e) => this.member(user, e.value.groups, tokenGroups))) return { allowed: true };
    return { allowed: false, route: `${cls}/${operation}`, command: wanted, entry: deciding[0] };
  }

  /** A member through the groups file or through the groups its Bearer token's claim names (JWTGroupsClaim). */
  private member(user: string, groups: readonly string[], tokenGroups: ReadonlySet<string> | undefined): boolean {
    if (groups.includes(ANY_USER)) return true;
    if (tokenGroups !== undefined && groups.some((g) => tokenGroups.has(g))) return true;
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
export function openAccess(
  table: AccessTable,
  groupsFile: string,
  log: Logger,
  recheckMs?: number,
  tokenGroups = false,
): Authorizer {
  const named = namedGroups(table);
  if (groupsFile === '') return new Authorizer(table, undefined);
  let started = false;
  const groups = new WatchedFile(
    groupsFile,
    (text, file) => {
      const parsed = parseGroups(text, file);
      // with groups from Bearer tokens (JWTGroupsClaim) a group the file lacks may still have members
      const missing = tokenGroups ? [] : named.filter((g) => !parsed.names.has(g));
      if (missing.length > 0) {
        const what = `Access names ${missing.map((g) => `'${g}'`).join(', ')}, which groups file '${file}' does not define`;
        if (!started)
          throw new ConfigError(
            `${what}; define ${missing.length === 1 ? 'it' : 'them'} there (a group with no members denies everyone) or correct Access`,
          );
        log.warn(
          `${what}: no one is in ${missing.length === 1 ? 'it' : 'them'} until the file defines ${missing.length === 1 ? 'it' : 'them'} again`,
        );
      }
      return parsed;
    },
    {
      param: 'Groups',
      kind: 'groups file',
      onReloadError: (m) => log.error(m),
      ...(recheckMs === undefined ? {} : { recheckMs }),
    },
  );
  started = true;
  return new Authorizer(table, groups);
}
