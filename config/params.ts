/**
 * The declarative parameter tables (docs/ARCHITECTURE.md, Configuration). Each service declares its
 * parameters once; parsing, validation, `hivenode params`, the README reference and the dashboard
 * all read the tables. The TypeScript type of a compiled configuration is derived from its table,
 * so a typo in a parameter name is a compile error, not a silent undefined.
 */

/** Kinds of parameter values. */
export const ParamType = {
  /** Free text. */
  String: 'string',
  /** A whole number. */
  Int: 'int',
  /** true/false, also 1/0, yes/no, on/off, any case. */
  Bool: 'bool',
  /** A duration (`250ms`, `20s`, `5m`, `1h`, `1m30s`); compiled to milliseconds. */
  Duration: 'duration',
  /** One of `values`, compared without case; compiled to the spelling in `values`. */
  Enum: 'enum',
} as const;
export type ParamType = (typeof ParamType)[keyof typeof ParamType];

/** One parameter of a service, as the spec's tables give it. */
export interface ParamSpec {
  /** Name exactly as written in the spec (matching is case-insensitive). */
  readonly name: string;
  readonly type: ParamType;
  /** The spec default in its textual form; undefined where the spec says "none". */
  readonly default?: string;
  /**
   * A default that follows an earlier Enum parameter of the same table: its value → this
   * parameter's default text (SQL_PORT follows SQL_ENGINE). A value not in the map does not use
   * this parameter (sqlite has no port): it compiles to `default` there, and the reference says
   * "not used by" it. The reference shows the map, so the defaults are declared once for both.
   */
  readonly defaultBy?: { readonly param: string; readonly values: Readonly<Record<string, string>> };
  /** One line for help output and the README. */
  readonly description: string;
  /** A `<name>_CTRL` companion (default '') names a control attribute overriding it per message. */
  readonly ctrl?: boolean;
  /** Masked in logs unless LOGSENSITIVE; `file://<path>` values are read from the file. */
  readonly secret?: boolean;
  /**
   * The value names a file the service reads itself and reads again when it changes (a TLS key or
   * certificate): a secret's `file://<path>` then stays a path instead of being read once at start.
   */
  readonly watchedFile?: boolean;
  /** Accepted values of an Enum. */
  readonly values?: readonly string[];
  /** Unit of a plain number given for a Duration (the spec's seconds, unless stated). */
  readonly unit?: 's' | 'ms';
  /** Inclusive bounds of an Int. */
  readonly min?: number;
  readonly max?: number;
  /** A value must be given (the spec's "mandatory: yes"). */
  readonly mandatory?: boolean;
  /** Not in the spec: added by hivenode; shown as such in the reference. */
  readonly beyondSpec?: boolean;
}

/** A table of one service: an ordered list of parameter specs. */
export type ParamTable = readonly ParamSpec[];

type ValueOfSpec<P extends ParamSpec> = P['type'] extends 'int' | 'duration'
  ? number
  : P['type'] extends 'bool'
    ? boolean
    : string;

type CtrlNames<T extends ParamTable> = T[number] extends infer P
  ? P extends { ctrl: true; name: infer N extends string }
    ? `${N}_CTRL`
    : never
  : never;

/** The compiled, typed configuration of a table: one member per parameter and `_CTRL` companion. */
export type ConfigOf<T extends ParamTable> = { readonly [P in T[number] as P['name']]: ValueOfSpec<P> } & {
  readonly [K in CtrlNames<T>]: string;
};

/** The table with every `_CTRL` companion spelled out as its own String parameter. */
export function expandCtrl(t: ParamTable): ParamSpec[] {
  const out: ParamSpec[] = [];
  for (const p of t) {
    out.push(p);
    if (p.ctrl) {
      out.push({
        name: `${p.name}_CTRL`,
        type: ParamType.String,
        default: '',
        description: `Control attribute that overrides ${p.name} at runtime.`,
      });
    }
  }
  return out;
}

/**
 * Fails on duplicate names (case-insensitive), enum defaults outside their values, and a `defaultBy`
 * that does not follow an earlier Enum by its values.
 */
export function checkTable(service: string, t: ParamTable): void {
  const seen = new Map<string, ParamSpec>();
  for (const p of expandCtrl(t)) {
    const key = p.name.toLowerCase();
    if (seen.has(key)) throw new Error(`parameter table of ${service} declares ${p.name} twice`);
    if (p.defaultBy) {
      const by = seen.get(p.defaultBy.param.toLowerCase());
      if (by?.type !== ParamType.Enum)
        throw new Error(
          `parameter table of ${service}: ${p.name} takes its default from ${p.defaultBy.param}, which is not an earlier enum`,
        );
      const stray = Object.keys(p.defaultBy.values).find((v) => !by.values?.includes(v));
      if (stray !== undefined)
        throw new Error(
          `parameter table of ${service}: ${p.name} has a default for ${p.defaultBy.param} '${stray}', which is not one of its values`,
        );
    }
    seen.set(key, p);
    if (
      p.type === ParamType.Enum &&
      p.default !== undefined &&
      p.default !== '' &&
      !p.values?.some((v) => v.toLowerCase() === p.default!.toLowerCase())
    ) {
      throw new Error(`parameter table of ${service}: default of ${p.name} is not one of its values`);
    }
  }
}
