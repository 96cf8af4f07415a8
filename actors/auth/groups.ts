/**
 * The gateway's groups file (`Groups`), in Apache's AuthGroupFile format: `group: user1 user2 …` per
 * line, `#` comments and blank lines; a group may appear on several lines and its members are merged,
 * as Apache does. Group and user names are case-sensitive, like the users file. Also the edit
 * `hivenode passwd --group` makes: the user added to groups, every other line kept as it was.
 */
import { ConfigError } from '../../protocol/errors.js';

export interface Groups {
  /** Every group the file names, members or not. */
  readonly names: ReadonlySet<string>;
  /** The groups of each user that is in at least one. */
  readonly ofUser: ReadonlyMap<string, ReadonlySet<string>>;
}

const LINE = /^([^\s:#]+)\s*:(.*)$/;
/** '*' is Access's "any authenticated user": a file group of that name could never be told apart. */
const RESERVED = '*';

interface GroupLine {
  group: string;
  members: string[];
}

/** The group line a text line holds, undefined for comments and blank lines; throws naming the line. */
function groupLine(raw: string, lineNo: number, file: string): GroupLine | undefined {
  const line = raw.trim();
  if (line === '' || line.startsWith('#')) return undefined;
  const m = LINE.exec(line);
  if (!m) throw new ConfigError(`groups file ${file} line ${lineNo}: expected 'group: user1 user2 …'`);
  if (m[1] === RESERVED)
    throw new ConfigError(
      `groups file ${file} line ${lineNo}: '*' is not a group name (in Access it means any authenticated user)`,
    );
  const members = m[2]!
    .trim()
    .split(/\s+/)
    .filter((u) => u !== '');
  const bad = members.find((u) => u.includes(':'));
  if (bad !== undefined)
    throw new ConfigError(
      `groups file ${file} line ${lineNo}: user name '${bad}' contains ':' (one group per line: 'group: user1 user2 …')`,
    );
  return { group: m[1]!, members };
}

/** Parses groups-file text; throws a ConfigError naming the file and the bad line. */
export function parseGroups(text: string, file: string): Groups {
  const names = new Set<string>();
  const ofUser = new Map<string, Set<string>>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const parsed = groupLine(raw, i + 1, file);
    if (!parsed) return;
    names.add(parsed.group);
    for (const user of parsed.members) {
      const set = ofUser.get(user) ?? new Set<string>();
      set.add(parsed.group);
      ofUser.set(user, set);
    }
  });
  return { names, ofUser };
}

/** Checks a group name given on the command line (`hivenode passwd --group`). */
export function checkGroupName(group: string): string {
  if (!/^[^\s:#]+$/.test(group) || group === RESERVED)
    throw new ConfigError(`group name '${group}' is not valid: no white space, ':', '#', and not '*'`);
  return group;
}

/**
 * The groups-file text with `user` added to each of `groups` it is not in yet: to the group's first
 * line when the group has one, else on a new line at the end. Comments, blank lines and every other
 * line stay as they were. The text is parsed first, so a bad file is refused rather than made worse.
 */
export function addUserToGroups(text: string, user: string, groups: readonly string[], file: string): string {
  const current = parseGroups(text, file);
  const missing = groups.filter((g, i) => groups.indexOf(g) === i && !current.ofUser.get(user)?.has(g));
  const lines = text === '' ? [] : text.replace(/\r?\n$/, '').split(/\r?\n/);
  const appended: string[] = [];
  for (const group of missing) {
    const at = lines.findIndex((raw, i) => groupLine(raw, i + 1, file)?.group === group);
    if (at < 0) appended.push(`${group}: ${user}`);
    else lines[at] = `${lines[at]!.trimEnd()} ${user}`;
  }
  return `${[...lines, ...appended].join('\n')}\n`;
}
