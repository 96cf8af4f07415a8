/**
 * Shapes and helpers for writing conformance cases compactly. A case runs one template (after
 * optional earlier parses) with JSON data; Go's text/template provides the expected result unless
 * the case carries a hand-written expectation (features newer than the Go used as oracle).
 */

/** A hand-written expectation, for behaviour the oracle's Go version lacks. */
export interface Hand {
  output: string;
  error?: string;
}

/** One case as written in the group files. */
export interface CaseDef {
  name: string;
  template: string;
  data?: unknown;
  /** Go missingkey option. */
  missingkey?: 'default' | 'invalid' | 'zero' | 'error';
  /** Execute this named template instead of the main one. */
  exec?: string;
  /** Texts parsed into the same set before `template`. */
  pre?: string[];
  hand?: Hand;
  /** Why a case is hand-written, or anything else worth knowing. */
  note?: string;
  /** Delimiters of the case itself (mirrored cases get [[ ]]). */
  delims?: [string, string];
  /** Set false when the [[ ]] twin would be meaningless. */
  mirror?: boolean;
}

/** A case in cases.json. */
export interface OracleCase extends CaseDef {
  group: string;
}

export interface Group {
  group: string;
  cases: CaseDef[];
}

/** Shorthand: [name, template, data?] rows become cases. */
export function rows(
  list: ReadonlyArray<readonly [string, string, unknown?]>,
  extra: Partial<CaseDef> = {},
): CaseDef[] {
  return list.map(([name, template, data]) => ({ name, template, ...(data === undefined ? {} : { data }), ...extra }));
}

/** The data most cases run against. */
export const D = {
  S: 'hello',
  E: '',
  I: 42,
  Z: 0,
  N: -7,
  F: 1.5,
  B: true,
  NB: false,
  Nil: null,
  L: ['a', 'b', 'c'],
  LI: [3, 1, 2],
  LE: [],
  LM: [
    { Name: 'x', V: 1 },
    { Name: 'y', V: 2 },
  ],
  M: { b: 2, a: 1, c: 3 },
  ME: {},
  MM: { inner: { deep: 'v' }, list: [1, 2] },
  U: 'héllo, 世界',
  Q: 'a"b\'c<d>&e',
  Delim: '{{.S}}',
  DelimB: '[[.S]]',
  Mixed: [1, 'two', 3.5, true, null, [1, 2], { k: 'v' }],
  Big: 9007199254740991,
  Neg: -1.25,
  Sci: 1e21,
  Small: 1e-7,
  Keys: { '10': 'ten', '9': 'nine', a: 'A', B: 'b', é: 'e-acute' },
};
