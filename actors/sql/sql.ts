/**
 * The SQL service (README, The SQL service): SELECT, INSERT, UPDATE, DELETE or raw SQL against one
 * database per message, or — in poll mode — a SELECT every SQL_POLLINTERVAL emitted to
 * OUTPUTCHANNEL. Beyond the spec, UPSERT, and with SQL_BATCH the many rows of one message written
 * all or none (rows.ts, batch.ts, transaction.ts). Values are always bound parameters; identifiers
 * are validated, quoted and checked against the database's catalog (at start, after SQL_INITFILE;
 * for overrides before they first run); results are shaped by results.ts (docs/ARCHITECTURE.md, Result shapes). A poll-mode
 * instance only polls: it does not listen on a channel.
 *
 * The database may be down at start or go away later: the service stays up, answers 502 with the
 * reason meanwhile (503 when the pool has no free connection in time, 504 for a statement over
 * SQL_TIMEOUT) and uses the database again as soon as it answers. Outages are logged when they begin
 * and end, not per message.
 */
import { SERVICES } from '../../config/registry.js';
import { compilerFor } from '../../config/resolve.js';
import { SQL_PARAMS } from '../../config/sql.js';
import { Code } from '../../protocol/codes.js';
import { ConfigError, describeError } from '../../protocol/errors.js';
import type { Result } from '../../protocol/message.js';
import type { RequestShape, RunningService, ServiceContext } from '../service/context.js';
import { defineService } from '../service/context.js';
import type { Answer, Handler } from '../service/serve.js';
import { serve } from '../service/serve.js';
import { Catalog } from './catalog.js';
import { databaseOptions } from './connection-options.js';
import type { Outcome } from './outcome.js';
import { allRowsWritten, eachRowResult, refusedForValues, writtenOf } from './row-codes.js';
import { Database } from './database.js';
import { readInitFile, runInitStatements } from './init-file.js';
import { NameChecker, checkConfigured } from './name-check.js';
import type { Planned, SqlConfig } from './planner.js';
import { Planner } from './planner.js';
import { pollerPlans } from './poll-plans.js';
import type { RunningPoller } from './poller.js';
import { startPoller } from './poller.js';
import { sharedPolling } from './shared-polling.js';
import { bindValues, displaySql } from './placeholders.js';
import type { ParamSource } from './placeholders.js';
import type { RowsChunk } from './batch.js';
import { rowsChunks } from './batch.js';
import { transactionResult } from './raw-transaction.js';
import { rowsResult, rowsWrittenResult, writeResult } from './results.js';
import type { PlanKind } from './statement.js';
import type { TransactionStep } from './transaction.js';
import { annotateSpan } from '../observe/trace-scope.js';
import { statementAttributes } from './trace-attributes.js';
import { importModule } from '../../protocol/import-module.js';

/**
 * What must happen once the database first answers, before any statement: SQL_INITFILE (which may
 * create the tables), then the configured names checked against the catalog. At start when the
 * database answers then; else before the first statement, retried until it succeeds.
 */
function startupRunner(
  ctx: ServiceContext<SqlConfig>,
  db: Database,
  checkNames: () => Promise<void>,
): { ready(): Promise<void> | undefined; connectedAtStart(): Promise<void> } {
  const path = ctx.config.SQL_INITFILE.trim();
  const statements = path === '' ? [] : readInitFile(path, db);
  let initDone = statements.length === 0;
  let done = false;
  let running: Promise<void> | undefined;
  let reported = '';
  const steps = async (): Promise<void> => {
    if (!initDone) {
      await runInitStatements(db, path, statements);
      initDone = true;
      ctx.log.info(`SQL_INITFILE '${path}': ${statements.length} statement${statements.length === 1 ? '' : 's'} run`);
    }
    await checkNames();
  };
  const run = (): Promise<void> =>
    (running ??= steps().then(
      () => {
        done = true;
      },
      (e: unknown) => {
        running = undefined;
        // found only now (the database was down at start): statements answer 500 until it is fixed
        if (e instanceof ConfigError && e.message !== reported) {
          reported = e.message;
          ctx.log.error(
            `${e.message}; statements are answered 500 until the configuration or the database is corrected`,
          );
        }
        throw e;
      },
    ));
  return {
    // undefined once done: the statement path then awaits nothing (no microtask per statement)
    ready: () => (done ? undefined : run()),
    async connectedAtStart() {
      try {
        await run();
      } catch (e) {
        // the database answered: a failing init statement or an unknown name is a configuration error
        throw e instanceof ConfigError ? e : new ConfigError(describeError(e));
      }
    },
  };
}

/**
 * How long after the node is ready Sequelize starts loading: evaluating it holds the event loop for
 * a while (about 100 ms of CPU), and the health check that just turned 'ok' should not wait for that.
 */
const PRELOAD_AFTER_READY_MS = 200;

/**
 * Sequelize (not needed to start on SQLite, database.ts) loads shortly after the whole node is ready,
 * not while the services after this one still start: the node is ready sooner, and the first
 * statement that needs it rarely waits (one that comes sooner waits for the load).
 */
function preloadOnceReady(ctx: ServiceContext<SqlConfig>, db: Database): void {
  void ctx.readiness.whenReady().then(() => setTimeout(() => db.preload(), PRELOAD_AFTER_READY_MS).unref());
}

/** The modes that cannot be combined (a change stream checks its own): the start runs it, and so do `hivenode check` and a reload. */
function checkModes(c: SqlConfig): void {
  if (c.SQL_CHANGES) return;
  if (c.SQL_RAWTRANSACTION && !c.SQL_RAWMODE)
    throw new ConfigError(
      'SQL_RAWTRANSACTION needs SQL_RAWMODE=true: it runs the statements of SQL_RAWVALUE as one transaction',
    );
  if (c.SQL_POLLMODE && c.SQL_RAWMODE)
    throw new ConfigError('SQL_POLLMODE polls the SELECT configuration; it cannot be combined with SQL_RAWMODE');
  if (c.SQL_ROWCODES && !c.SQL_BATCH)
    throw new ConfigError(
      'SQL_ROWCODES answers a code per row of a SQL_BATCH message; set SQL_BATCH=true, or leave SQL_ROWCODES out',
    );
  if (c.SQL_POLLMODE && c.SQL_BATCH)
    throw new ConfigError(
      'SQL_BATCH writes rows with INSERT or UPSERT; it cannot be combined with SQL_POLLMODE, which polls a SELECT',
    );
}

async function start(ctx: ServiceContext<SqlConfig>): Promise<RunningService> {
  const c = ctx.config;
  if (c.SQL_CHANGES) {
    // loaded only in this mode: the replication clients and decoders are not needed by any other SQL service
    const { startChangeStream } = await importModule(
      import.meta.url,
      './change-stream.js',
      () => import('./change-stream.js'),
    );
    return startChangeStream(ctx, databaseOptions(c));
  }
  const db = new Database(databaseOptions(c));
  const checker = new NameChecker(db.dialect, new Catalog(db));
  let planner: Planner | undefined;
  let pollPlans: ReturnType<typeof pollerPlans> | undefined;
  try {
    checkModes(c);
    if (c.SQL_POLLMODE) pollPlans = pollerPlans(c, db.dialect);
    else planner = new Planner(c, db.dialect, checker);
    const first = pollPlans?.first;
    const init = startupRunner(
      ctx,
      db,
      first ? () => checkConfigured(checker, first.names) : () => planner!.checkConfigured(),
    );
    let reachable = true;
    try {
      await db.check();
    } catch (e) {
      if (db.dialect === 'sqlite') throw new ConfigError(`${db.describe()} cannot be opened: ${describeError(e)}`);
      reachable = false;
      ctx.log.warn(
        `${db.describe()} does not answer now (${describeError(e)}); the service runs and ${c.SQL_POLLMODE ? 'polls' : 'answers 502'} until it does`,
      );
    }
    if (reachable) await init.connectedAtStart();
    const running = c.SQL_POLLMODE
      ? await startPolling(ctx, db, pollPlans!, init.ready)
      : await startServing(ctx, db, planner!, init.ready);
    preloadOnceReady(ctx, db);
    return running;
  } catch (e) {
    await db.close().catch(() => undefined);
    throw e;
  }
}

async function startPolling(
  ctx: ServiceContext<SqlConfig>,
  db: Database,
  plans: ReturnType<typeof pollerPlans>,
  ready: () => Promise<void> | undefined,
): Promise<RunningService> {
  const c = ctx.config;
  if (plans.note) ctx.log.warn(plans.note);
  const shared = await sharedPolling(ctx, plans);
  const tracking = plans.tracking && { ...plans.tracking, state: shared?.mark ?? plans.tracking.state };
  const poller: RunningPoller = startPoller(ctx, db, {
    name: ctx.name,
    intervalMs: c.SQL_POLLINTERVAL,
    cls: c.SQL_POLLCLASS,
    operation: c.SQL_POLLOPERATION,
    channel: c.OUTPUTCHANNEL,
    first: plans.first,
    tracking,
    ready,
    ...(shared ? { lease: shared.lease } : {}),
  });
  ctx.log.info(
    `polling ${db.describe()} every ${c.SQL_POLLINTERVAL} ms to channel '${c.OUTPUTCHANNEL}': ${displaySql(plans.first.sql)}${plans.tracking ? ` (tracking ${c.SQL_TRACKCOLUMN})` : ''}`,
  );
  return {
    async drain(deadlineMs) {
      await poller.stop(deadlineMs);
      await db.close();
    },
    status: () => ({
      mode: 'poll',
      database: db.describe(),
      channel: c.OUTPUTCHANNEL,
      poller: poller.status(),
      pool: db.pool(),
    }),
  };
}

/** The Result of one statement. */
function outcomeResult(outcome: Outcome): Result {
  return 'rows' in outcome
    ? rowsResult(outcome.rows, outcome.columns)
    : writeResult(outcome.affected, outcome.insertId);
}

/** Answers a statement or transaction: its failure, or its outcome shaped into a Result. */
function reply<T>(
  answer: Answer,
  error: Error | undefined,
  outcome: T | undefined,
  shape: (outcome: T) => Result,
): void {
  if (error) return answer.error(error);
  let result: Result;
  try {
    result = shape(outcome!);
  } catch (e) {
    return answer.error(e);
  }
  answer.result(result);
}

async function startServing(
  ctx: ServiceContext<SqlConfig>,
  db: Database,
  planner: Planner,
  ready: () => Promise<void> | undefined,
): Promise<RunningService> {
  let outage = 0;

  // database trouble is logged when it begins and when it ends, not once per message
  const noteOutcome = (code: number, error?: unknown): void => {
    if (code === Code.UpstreamError || code === Code.Unavailable || code === Code.Timeout) {
      const reason = error === undefined ? '' : `: ${describeError(error)}`;
      if (outage++ === 0)
        ctx.log.warn(
          `statement failed (${code})${reason}; further failures are logged at debug level until one succeeds`,
        );
      else ctx.log.debug(`statement failed (${code})${reason}`);
    } else if (code === Code.Success && outage > 0) {
      ctx.log.info(`database statements succeed again after ${outage} failure${outage === 1 ? '' : 's'}`);
      outage = 0;
    }
  };

  const c = ctx.config;
  const rowCodes = c.SQL_BATCH && c.SQL_ROWCODES;
  // the statements of a multi-row write (SQL_BATCH, or an UPSERT): one is atomic by itself, several
  // run as one transaction (transaction.ts: on SQLite with the shared connection to themselves)
  // SQL_ROWCODES: `redo` cuts the message's rows one to a statement, for when the fast path is refused (row-codes.ts)
  let rowRedos = 0;
  const writeRows = (kind: PlanKind, chunks: RowsChunk[], answer: Answer, redo?: () => RowsChunk[]): void => {
    if (chunks.length === 0) return answer.result(redo ? allRowsWritten([], 0) : rowsWrittenResult([]));
    const rows = chunks.reduce((n, chunk) => n + chunk.rows, 0);
    const written = (outcomes: Outcome[]): Result =>
      redo ? allRowsWritten(outcomes, rows) : rowsWrittenResult(outcomes.map(writtenOf));
    const done = (error: Error | undefined, outcomes: Outcome[] | undefined): void => {
      if (!error || !redo || !refusedForValues(error)) return reply(answer, error, outcomes, written);
      rowRedos++;
      let steps: TransactionStep[];
      try {
        steps = redo().map((chunk, i) => ({
          kind,
          sql: chunk.sql,
          bind: chunk.bind,
          label: `row ${i + 1} of ${rows}`,
        }));
      } catch (e) {
        return answer.error(e);
      }
      db.transactionEach(steps, (e, each) => reply(answer, e, each, eachRowResult));
    };
    if (chunks.length === 1)
      return db.submit(kind, chunks[0]!.sql, chunks[0]!.bind, (error, outcome) => done(error, outcome && [outcome]));
    let first = 1;
    const steps = chunks.map((chunk) => {
      const label = `rows ${first}-${first + chunk.rows - 1} of ${rows}`;
      first += chunk.rows;
      return { kind, sql: chunk.sql, bind: chunk.bind, label };
    });
    db.transaction(steps, done);
  };

  // a statement awaits nothing of its own: planned and bound at once, then one reaction to the query
  const handle: Handler = ({ message }, answer: Answer): void => {
    let plan: Planned;
    let bind: Record<string, unknown> | undefined;
    let steps: TransactionStep[] | undefined;
    let chunks: RowsChunk[] | undefined;
    try {
      plan = planner.planFor(message);
      annotateSpan(message, () => statementAttributes(plan));
      // every statement of a transaction binds its own placeholders; a missing value fails before BEGIN
      if (plan.kind === 'transaction')
        steps = plan.statements.map((st) => ({
          kind: st.kind,
          sql: st.sql,
          bind: bindValues(st.params, message.Data),
        }));
      else if (plan.rows && (c.SQL_BATCH || plan.kind === 'upsert'))
        chunks = rowsChunks(plan.rows, message.Data, { on: c.SQL_BATCH, max: c.SQL_MAXBATCH });
      else bind = bindValues(plan.params, message.Data);
    } catch (e) {
      return answer.error(e);
    }
    const submit = (): void => {
      try {
        if (plan.kind === 'transaction')
          return db.transaction(steps!, (error, outcomes) => reply(answer, error, outcomes, transactionResult));
        if (chunks)
          return writeRows(
            plan.kind,
            chunks,
            answer,
            rowCodes && plan.rows
              ? () => rowsChunks(plan.rows!, message.Data, { on: true, max: c.SQL_MAXBATCH }, 1)
              : undefined,
          );
        db.submit(plan.kind, plan.sql, bind!, (error, outcome) => reply(answer, error, outcome, outcomeResult));
      } catch (e) {
        // every delivery is answered (and leaves the in-flight count) whatever fails on the way
        answer.error(e);
      }
    };
    // the plan's names are checked against the catalog once, before it first runs
    const checked = (): void => {
      const checking = planner.verify(plan);
      if (!checking) return submit();
      void checking.then(submit, (e: unknown) => answer.error(e));
    };
    const initializing = ready();
    if (!initializing) return checked();
    void initializing.then(checked, (e: unknown) => answer.error(e));
  };

  const running = await serve(ctx, {
    worker: 'statements',
    handle,
    observe: noteOutcome,
    close: () => db.close(),
    // rowRedos: SQL_BATCH messages whose rows were redone one by one (a row refused): the fast path is the rest
    status: () => ({
      mode: ctx.config.SQL_RAWMODE ? (ctx.config.SQL_RAWTRANSACTION ? 'raw transaction' : 'raw') : 'statement',
      database: db.describe(),
      pool: db.pool(),
      ...(rowCodes ? { rowRedos } : {}),
    }),
  });
  const refused = planner.refusedClauseControls();
  if (refused.length > 0)
    ctx.log.warn(`${refused.join(', ')}: these controls are answered 403 while SQL_ALLOWCLAUSECTRL is false`);
  const configured = planner.configured;
  const batch =
    c.SQL_BATCH && configured?.rows
      ? `; SQL_BATCH: up to ${c.SQL_MAXBATCH} rows a message, ${configured.rows.maxRows} a statement`
      : '';
  // the configured statement's placeholders are the Data it reads (a request's controls may build another)
  running.describe = () => ({ fields: describeParams(configured?.params ?? []), controls: [] });
  ctx.log.info(
    `SQL service on channel '${ctx.inputChannel}' using ${db.describe()}${configured ? `: ${displaySql(configured.sql)}${configured.params.length ? ` (bound: ${configured.params.map((p) => p.name).join(', ')})` : ''}` : ''}${batch}`,
  );
  return running;
}

/** Each Data field a statement's placeholders read, once, with the parameters that use it. */
function describeParams(params: readonly ParamSource[]): RequestShape['fields'] {
  const uses = new Map<string, { uses: Set<string>; count: boolean }>();
  for (const p of params) {
    const seen = uses.get(p.name) ?? { uses: new Set<string>(), count: false };
    seen.uses.add(p.use);
    seen.count ||= p.kind === 'count';
    uses.set(p.name, seen);
  }
  return [...uses].map(([name, u]) => ({
    name,
    required: true,
    description: `${u.count ? 'a whole number ' : ''}bound to the placeholder of ${[...u.uses].join(', ')}`,
  }));
}

export const sqlService = defineService(SERVICES.sql, compilerFor('sql', SQL_PARAMS), start, checkModes);
