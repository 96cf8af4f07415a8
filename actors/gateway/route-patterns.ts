/**
 * Tables keyed by route pattern, shared by `Routes` (pattern → channel) and `Access` (pattern →
 * groups): `pattern=value` entries separated by `;`. A pattern is `class/operation`, `class/*` or
 * `class` (any operation of the class, the same thing) or `*` (any route). The most specific entry
 * wins whatever the order: class/operation, then the class, then `*`. Class and operation match
 * without case. A pattern given twice is refused: which of the two was meant cannot be known.
 */

export interface PatternEntry<T> {
  /** The pattern as written (trimmed). */
  readonly pattern: string;
  readonly value: T;
}

export interface PatternTable<T> {
  /** The most specific entry matching the route, undefined when none does. */
  match(cls: string, operation: string): PatternEntry<T> | undefined;
  readonly entries: ReadonlyArray<PatternEntry<T>>;
}

const NAME = '[A-Za-z0-9_.-]+';
const ENTRY = new RegExp(`^(\\*|${NAME}(?:/(?:\\*|${NAME}))?)\\s*=\\s*(.*)$`);

/**
 * Parses a table; `form` is the entry form for messages ('class[/operation]=channel'), `parseValue`
 * reads one value and throws an Error saying what is wrong with it. Throws an Error naming the entry.
 */
export function parsePatternTable<T>(text: string, form: string, parseValue: (raw: string) => T): PatternTable<T> {
  const byClass = new Map<string, { any?: PatternEntry<T>; ops: Map<string, PatternEntry<T>> }>();
  let anyRoute: PatternEntry<T> | undefined;
  const entries: PatternEntry<T>[] = [];
  for (const raw of text.split(';')) {
    const written = raw.trim();
    if (written === '') continue;
    const m = ENTRY.exec(written);
    if (!m) throw new Error(`entry '${written}' is not of the form ${form}`);
    let value: T;
    try {
      value = parseValue(m[2]!.trim());
    } catch (e) {
      throw new Error(`entry '${written}': ${(e as Error).message}`);
    }
    const entry: PatternEntry<T> = { pattern: m[1]!, value };
    const [cls, op] = m[1]!.toLowerCase().split('/') as [string, string | undefined];
    const twice = (): Error =>
      new Error(
        `entry '${written}': pattern '${m[1]}' is given twice${op === '*' || (op === undefined && cls !== '*') ? ` ('${cls}' and '${cls}/*' are the same)` : ''}`,
      );
    if (cls === '*') {
      if (anyRoute) throw twice();
      anyRoute = entry;
    } else {
      const forClass = byClass.get(cls) ?? { ops: new Map<string, PatternEntry<T>>() };
      byClass.set(cls, forClass);
      if (op === undefined || op === '*') {
        if (forClass.any) throw twice();
        forClass.any = entry;
      } else {
        if (forClass.ops.has(op)) throw twice();
        forClass.ops.set(op, entry);
      }
    }
    entries.push(entry);
  }
  return {
    entries,
    match(cls, operation) {
      // a class or operation literally named '*' is a name like any other: only the entries above give '*' its meaning
      const forClass = byClass.get(cls.toLowerCase());
      return forClass?.ops.get(operation.toLowerCase()) ?? forClass?.any ?? anyRoute;
    },
  };
}
