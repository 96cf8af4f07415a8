/**
 * Chooses the statement of each message: the configured one, or one rebuilt with the message's
 * control overrides. A parameter with a `_CTRL` companion (e.g. SQL_WHERE_CTRL = 'where') is replaced
 * by the first value of that control when the message carries it.
 *
 * Overrides of identifiers (table, columns, GROUP BY, ORDER BY), of the statement kind, LIMIT, OFFSET,
 * value parameter names and the raw action are validated like configuration and answered 400 when
 * invalid. Overrides of clause TEXT (SQL_JOIN, SQL_WHERE, SQL_HAVING, SQL_RAWVALUE) are arbitrary SQL
 * written by whoever sends the message, so they need a second opt-in, SQL_ALLOWCLAUSECTRL=true;
 * without it such a control is answered 403 and nothing runs.
 *
 * Tables and columns an override names must be allowed (name-check.ts: the configured ones, plus
 * SQL_ALLOWEDTABLES and SQL_ALLOWEDCOLUMNS, never a catalog table; else 403) and, before the statement
 * first runs, exist in the database (else 400 naming them; for the configured statement, at start).
 *
 * The configured statement is built once at start (errors there stop the start); statements built
 * for overrides are cached, so a steady mix of overrides costs one build each.
 */
import type { SQL_PARAMS } from '../../config/sql.js';
import type { ConfigOf } from '../../config/params.js';
import { BadInputError, ConfigError, ForbiddenError, TooLargeError, describeError } from '../../protocol/errors.js';
import type { Message } from '../../protocol/message.js';
import type { Dialect } from './dialect.js';
import { lexOptions } from './dialect.js';
import { quoteGroupBy, quoteOrderBy, quotePlainColumns, quoteSelectColumns, quoteTable } from './identifiers.js';
import type { NameChecker } from './name-check.js';
import { AllowList, RefusedNameError, checkConfigured } from './name-check.js';
import type { StatementNames } from './names.js';
import { statementNames } from './names.js';
import { parseClause } from './placeholders.js';
import type { TransactionPlan } from './raw-transaction.js';
import { TooManyStatementsError, buildRawTransaction } from './raw-transaction.js';
import type { Plan, RawSettings, StatementSettings } from './statement.js';
import { SettingError, buildRaw, buildStatement, statementKind } from './statement.js';

export type SqlConfig = ConfigOf<typeof SQL_PARAMS>;

/** What one message runs: a statement, or the statements of a raw transaction (SQL_RAWTRANSACTION). */
export type Planned = Plan | TransactionPlan;

const STATEMENT_PARAMS = [
  'SQL_STATEMENT',
  'SQL_TABLE',
  'SQL_COLUMNS',
  'SQL_JOIN',
  'SQL_WHERE',
  'SQL_VALUEPARAMS',
  'SQL_GROUPBY',
  'SQL_HAVING',
  'SQL_ORDERBY',
  'SQL_LIMIT',
  'SQL_OFFSET',
] as const;
const RAW_PARAMS = ['SQL_RAWACTION', 'SQL_RAWVALUE'] as const;
type Overridable = (typeof STATEMENT_PARAMS)[number] | (typeof RAW_PARAMS)[number];

/** Parameters whose value is SQL text rather than a name: overriding them needs SQL_ALLOWCLAUSECTRL. */
const CLAUSE_PARAMS: ReadonlySet<Overridable> = new Set(['SQL_JOIN', 'SQL_WHERE', 'SQL_HAVING', 'SQL_RAWVALUE']);

const CACHE_LIMIT = 256;

export class Planner {
  private readonly params: readonly Overridable[];
  /** Control name → parameter, for the parameters whose `_CTRL` is configured. */
  private readonly controls: [string, Overridable][] = [];
  private readonly base: Planned | undefined;
  private readonly cache = new Map<string, Planned>();
  /** What overrides may name (undefined in raw mode, where the SQL text is the configuration's own). */
  private readonly allow: AllowList | undefined;
  /** The names of the configured statement, or of the set parameters when a control completes it. */
  private readonly configuredNames: StatementNames | undefined;
  /** The parameters each override plan replaced. */
  private readonly overridden = new WeakMap<Planned, ReadonlySet<string>>();

  /** `checker` (absent in tests without a database) checks names against the catalog. */
  constructor(
    private readonly config: SqlConfig,
    private readonly dialect: Dialect,
    private readonly checker?: NameChecker,
  ) {
    this.params = config.SQL_RAWMODE ? RAW_PARAMS : STATEMENT_PARAMS;
    checkRowsSettings(config);
    for (const p of this.params) {
      const control = config[`${p}_CTRL`].trim();
      if (control !== '') this.controls.push([control, p]);
    }
    this.base = this.buildBase();
    if (!config.SQL_RAWMODE) {
      const pieces = this.configuredPieces();
      this.configuredNames = this.base?.names ?? (pieces.table ? pieces : undefined);
      this.allow = new AllowList(dialect, pieces, config);
      if (
        config.SQL_TABLE_CTRL.trim() !== '' &&
        config.SQL_TABLE.trim() === '' &&
        config.SQL_ALLOWEDTABLES.trim() === ''
      ) {
        throw new ConfigError(
          'SQL_TABLE_CTRL: with SQL_TABLE empty, list the tables the control may name in SQL_ALLOWEDTABLES',
        );
      }
    }
  }

  /**
   * Every name the configuration writes, read as a SELECT would read them (what overrides may name by
   * default). A parameter the configured statement does not use (SQL_GROUPBY of an INSERT) was not
   * validated and may not read: then only the configured statement's own names count.
   */
  private configuredPieces(): StatementNames {
    try {
      return statementNames(this.dialect, this.config, undefined);
    } catch {
      return this.base?.names ?? { joins: [], joinsComplete: true, columns: [], stars: [] };
    }
  }

  /** Checks the configured names against the catalog: ConfigError naming the parameter of an unknown one. */
  checkConfigured(): Promise<void> {
    return this.checker ? checkConfigured(this.checker, this.configuredNames) : Promise.resolve();
  }

  /**
   * Checks a plan's names against the catalog before it first runs; undefined once checked. Unknown
   * names of an override are a 400 naming the control; of the configuration, a ConfigError (500).
   */
  verify(plan: Planned): Promise<void> | undefined {
    if (!this.checker || !plan.names) return undefined;
    const pending = this.checker.check(plan.names);
    if (!pending) return undefined;
    const overrides = this.overridden.get(plan);
    return pending.catch((e: unknown) => {
      throw e instanceof SettingError ? this.settingFailure(e, overrides) : e;
    });
  }

  /** Parameters whose clause-text control is configured but refused (for a warning at start). */
  refusedClauseControls(): string[] {
    if (this.config.SQL_ALLOWCLAUSECTRL) return [];
    return this.controls.filter(([, p]) => CLAUSE_PARAMS.has(p)).map(([c, p]) => `${p}_CTRL='${c}'`);
  }

  /** The configured statement (undefined when it depends on a control, e.g. SQL_STATEMENT_CTRL). */
  get configured(): Planned | undefined {
    return this.base;
  }

  /** The statement for one message. */
  planFor(message: Message): Planned {
    let overrides: [Overridable, string][] | undefined;
    for (const [control, param] of this.controls) {
      if (!Object.hasOwn(message.Control, control)) continue;
      const value = message.Control[control]![0];
      if (value === undefined) continue;
      if (CLAUSE_PARAMS.has(param) && !this.config.SQL_ALLOWCLAUSECTRL) {
        throw new ForbiddenError(
          `control '${control}' would replace the SQL text of ${param}; set SQL_ALLOWCLAUSECTRL=true to allow clause text from messages`,
        );
      }
      (overrides ??= []).push([param, value]);
    }
    if (!overrides) {
      if (this.base) return this.base;
      throw new BadInputError(this.missingMessage());
    }
    const key = JSON.stringify(overrides);
    const cached = this.cache.get(key);
    if (cached) return cached;
    const settings = { ...this.settings() };
    for (const [param, value] of overrides) settings[param] = value;
    const overridden = new Set<string>(overrides.map(([p]) => p));
    let plan: Planned;
    try {
      plan = this.build(settings);
      if (plan.names) this.allow?.check(plan.names, overridden);
    } catch (e) {
      throw e instanceof SettingError ? this.settingFailure(e, overridden) : e;
    }
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(key, plan);
    this.overridden.set(plan, overridden);
    return plan;
  }

  /** A parameter's error as answered: naming the control that set it (403 when not allowed, 413 for too many statements, else 400), or a ConfigError for the configuration. */
  private settingFailure(e: SettingError, overridden: ReadonlySet<string> | undefined): Error {
    if (!overridden) return new ConfigError(`${e.param}: ${e.message}`);
    const where = overridden.has(e.param) ? `control '${this.controlOf(e.param)}' (${e.param})` : e.param;
    if (e instanceof RefusedNameError) return new ForbiddenError(`${where}: ${e.message}`);
    return e instanceof TooManyStatementsError
      ? new TooLargeError(`${where}: ${e.message}`)
      : new BadInputError(`${where}: ${e.message}`);
  }

  private controlOf(param: string): string {
    return this.controls.find(([, p]) => p === param)?.[0] ?? '';
  }

  private settings(): Record<Overridable, string> {
    const out = {} as Record<Overridable, string>;
    for (const p of [...STATEMENT_PARAMS, ...RAW_PARAMS]) out[p] = this.config[p];
    return out;
  }

  private build(s: Record<Overridable, string>): Planned {
    if (this.config.SQL_RAWMODE)
      return this.config.SQL_RAWTRANSACTION
        ? buildRawTransaction(this.dialect, s as RawSettings)
        : buildRaw(this.dialect, s as RawSettings);
    const plan = buildStatement(this.dialect, {
      ...(s as StatementSettings),
      SQL_KEYCOLUMNS: this.config.SQL_KEYCOLUMNS,
    });
    // a batch writes rows: the statement a control picks must be one that does
    if (this.config.SQL_BATCH && !plan.rows)
      throw new SettingError(
        'SQL_STATEMENT',
        `SQL_BATCH=true writes rows with INSERT or UPSERT, not ${plan.kind.toUpperCase()}`,
      );
    return plan;
  }

  private missingMessage(): string {
    if (this.config.SQL_RAWMODE)
      return `no SQL text: SQL_RAWVALUE is empty and control '${this.controlOf('SQL_RAWVALUE')}' was not given`;
    return `no statement: SQL_STATEMENT is empty and control '${this.controlOf('SQL_STATEMENT')}' was not given`;
  }

  /** Builds the configured statement, or checks the set parameters when a control must complete it. */
  private buildBase(): Planned | undefined {
    const c = this.config;
    const incomplete = c.SQL_RAWMODE ? c.SQL_RAWVALUE.trim() === '' : c.SQL_STATEMENT.trim() === '';
    const completingControl = c.SQL_RAWMODE ? c.SQL_RAWVALUE_CTRL : c.SQL_STATEMENT_CTRL;
    try {
      if (!incomplete) return this.build(this.settings());
      if (completingControl.trim() === '') {
        throw new ConfigError(
          c.SQL_RAWMODE
            ? 'raw mode needs SQL_RAWVALUE (or SQL_RAWVALUE_CTRL)'
            : 'SQL_STATEMENT is required: SELECT, INSERT, UPDATE, DELETE or UPSERT (or SQL_STATEMENT_CTRL, or SQL_RAWMODE=true)',
        );
      }
      this.checkPieces();
      return undefined;
    } catch (e) {
      if (e instanceof SettingError) throw new ConfigError(`${e.param}: ${e.message}`);
      throw e;
    }
  }

  /** Validates each set parameter on its own, so a typo fails the start even if the statement comes from a control. */
  private checkPieces(): void {
    const c = this.config;
    const d = this.dialect;
    const check = (param: string, value: string, f: (v: string) => unknown): void => {
      if (value.trim() === '') return;
      try {
        f(value);
      } catch (e) {
        throw new SettingError(param, describeError(e));
      }
    };
    if (c.SQL_RAWMODE) {
      check('SQL_RAWACTION', c.SQL_RAWACTION, (v) => buildRaw(d, { SQL_RAWACTION: v, SQL_RAWVALUE: 'SELECT 1' }));
      return;
    }
    check('SQL_STATEMENT', c.SQL_STATEMENT, statementKind);
    check('SQL_TABLE', c.SQL_TABLE, (v) => quoteTable(d, v));
    check('SQL_COLUMNS', c.SQL_COLUMNS, (v) => quoteSelectColumns(d, v));
    check('SQL_GROUPBY', c.SQL_GROUPBY, (v) => quoteGroupBy(d, v));
    check('SQL_ORDERBY', c.SQL_ORDERBY, (v) => quoteOrderBy(d, v));
    check('SQL_KEYCOLUMNS', c.SQL_KEYCOLUMNS, (v) => quotePlainColumns(d, v));
    for (const p of ['SQL_JOIN', 'SQL_WHERE', 'SQL_HAVING'] as const)
      check(p, c[p], (v) => parseClause(v, lexOptions(d)));
  }
}

/**
 * The parameters of multi-row writes that no statement can make right: SQL_BATCH in raw mode, and
 * SQL_KEYCOLUMNS beside a configured statement other than UPSERT (most likely a mistyped
 * SQL_STATEMENT). A configured SQL_BATCH statement other than INSERT or UPSERT fails in `build`.
 */
function checkRowsSettings(c: SqlConfig): void {
  if (c.SQL_BATCH && c.SQL_RAWMODE)
    throw new ConfigError('SQL_BATCH writes rows with INSERT or UPSERT; it cannot be combined with SQL_RAWMODE');
  const statement = c.SQL_STATEMENT.trim().toLowerCase();
  if (
    c.SQL_KEYCOLUMNS.trim() !== '' &&
    !c.SQL_RAWMODE &&
    statement !== '' &&
    statement !== 'upsert' &&
    c.SQL_STATEMENT_CTRL.trim() === ''
  ) {
    throw new ConfigError(
      `SQL_KEYCOLUMNS: key columns are for SQL_STATEMENT UPSERT, and the statement is ${c.SQL_STATEMENT.trim().toUpperCase()}`,
    );
  }
}
