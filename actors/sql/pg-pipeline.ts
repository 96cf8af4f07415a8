/**
 * The PostgreSQL SELECTs of the statement path (driver-direct.ts), pipelined on a few connections of
 * Sequelize's pool as named prepared statements — where the service goes beyond a pool of one query
 * per connection (docs/ARCHITECTURE.md, SQL service):
 *
 * - Pipelining (node-postgres `pipeline` mode): a connection held for SELECTs takes the next one
 *   before the answer to the last has come, up to DEPTH at a time, each with its own Sync — so one
 *   failing SELECT fails alone, as on a connection of its own. A connection is taken from the pool
 *   only when every connection held is DEPTH deep or stalled, and goes back to the pool as soon as
 *   nothing is in flight on it; transactions and every other statement keep a connection to
 *   themselves, as before. A stalled connection (no answer for STALL_MS: a slow SELECT at its head)
 *   takes no more, so only the SELECTs written behind a slow one in those first milliseconds wait
 *   for it; the next take a connection from the pool, as before.
 * - Named prepared statements: the server parses and plans a text once per connection instead of at
 *   every call. A statement whose cached plan no longer fits the table (a column added under
 *   `SELECT *`: "cached plan must not change result type") is prepared again under a new name, and
 *   the SELECT run again.
 *
 * Measured on 2 cores with the server beside the node (bench/sql.ts): a pool of 10 connections spent
 * ~65 µs of server CPU and ~43 µs of node CPU a SELECT by key; four pipelined connections with named
 * statements ~22 µs and ~25 µs.
 */

/** The little of a node-postgres Client this path uses (the project carries no types for pg). */
export interface PgClient {
  query(config: { text: string; values: unknown[]; name?: string }, done: (e: Error | null, result: { rows: unknown[] }) => void): void;
  /** node-postgres: queries are written without waiting for the answers before them. */
  pipeline: boolean;
  /** Sequelize's pool drops a connection marked so when it comes back. */
  _invalid?: boolean;
  /** node-postgres's record of the statements prepared on the connection, and of those sent to be. */
  connection: { parsedStatements: Record<string, string>; submittedNamedStatements: Record<string, string> };
}

export interface PgPool {
  getConnection(options: { type: string }): Promise<unknown>;
  releaseConnection(connection: unknown): void;
}

type Done = (e: Error | null, result?: { rows: unknown[] }) => void;

/** SELECTs written on one connection before their answers: past this a further connection is taken. */
const DEPTH = 8;
/** A connection whose head SELECT has been running this long takes no more (it may be a slow one). */
const STALL_MS = 20;
/** Statement names kept; a text beyond them runs unnamed (parsed at each call, as before). */
const NAMES_KEPT = 256;
/** Prepared statements per connection at most: the server keeps each until the connection closes. */
const NAMES_PER_CONNECTION = 64;

interface Waiting {
  text: string;
  values: unknown[];
  done: Done;
}

class Lane {
  client: PgClient | undefined;
  inFlight = 0;
  /** When the lane last made progress (a SELECT answered, or the first one sent). */
  since = 0;
  /** SELECTs given while the connection is being taken from the pool. */
  waiting: Waiting[] = [];
  release: NodeJS.Immediate | undefined;
}

/** The failures on which Sequelize marks a PostgreSQL connection invalid (its query.js). */
const BROKEN_PG = /ECONNRESET|Unable to set non-blocking to true|SSL SYSCALL error: EOF detected|Local: Authentication failure|^ Query read timeout$/i;

/** What Sequelize's PostgreSQL query does with a broken connection: marked, the pool drops it when it comes back. */
export function markIfBroken(client: Pick<PgClient, '_invalid'>, e: Error): void {
  if (BROKEN_PG.test(`${(e as NodeJS.ErrnoException).code ?? ''} ${e.message}`)) client._invalid = true;
}

/** PostgreSQL's refusal to run a prepared statement whose result columns changed (feature_not_supported). */
const stalePlan = (e: Error): boolean => (e as { code?: string }).code === '0A000' && /cached plan must not change result type/.test(e.message);

/** A statement name per text, never reused for another text (names are per connection on the server). */
class StatementNames {
  private readonly names = new Map<string, string>();
  private next = 0;

  constructor(private readonly prefix: string) {}

  of(text: string): string | undefined {
    let name = this.names.get(text);
    if (name === undefined && this.names.size < NAMES_KEPT) this.names.set(text, (name = this.fresh()));
    return name;
  }

  /** The text's plan went stale under `name`: it is prepared again under a new one (once, however many SELECTs saw it). */
  renew(text: string, name: string): void {
    if (this.names.get(text) === name) this.names.set(text, this.fresh());
  }

  private fresh(): string {
    return `${this.prefix}${this.next++}`;
  }
}

let instances = 0;

/** The names this path prepared on each connection (they stay there while the pool keeps it). */
const prepared = new WeakMap<PgClient, Set<string>>();

export class PgPipeline {
  private readonly lanes: Lane[] = [];
  private readonly names = new StatementNames(`hivenode_${instances++}_`);

  constructor(
    private readonly pool: PgPool,
    private readonly maxLanes: number,
  ) {}

  /** Runs a SELECT with values (extended protocol; a text without values keeps a connection to itself). */
  select(text: string, values: unknown[], done: Done): void {
    const lane = this.laneFor();
    lane.inFlight++;
    if (lane.client) this.send(lane, text, values, done, true);
    else lane.waiting.push({ text, values, done });
  }

  /** Gives back the connections held with nothing in flight (the database is closing). */
  forget(): void {
    for (const lane of [...this.lanes]) if (lane.inFlight === 0) this.giveBack(lane);
  }

  /**
   * The connection for the next SELECT: the least busy one held that is not stalled, while under
   * DEPTH (or deeper when the pool lends no more); otherwise one more from the pool — which, when
   * every connection it may lend is held, waits for one as any statement does (503 after
   * SQL_ACQUIRETIMEOUT), rather than queueing behind a SELECT that may be slow.
   */
  private laneFor(): Lane {
    const now = performance.now();
    let best: Lane | undefined;
    for (const lane of this.lanes) {
      if (lane.client && lane.inFlight > 0 && now - lane.since > STALL_MS) continue;
      if (best === undefined || lane.inFlight < best.inFlight) best = lane;
    }
    if (best && (best.inFlight < DEPTH || this.lanes.length >= this.maxLanes)) return this.keep(best);
    return this.open();
  }

  private keep(lane: Lane): Lane {
    if (lane.release) {
      clearImmediate(lane.release);
      lane.release = undefined;
    }
    return lane;
  }

  private open(): Lane {
    const lane = new Lane();
    this.lanes.push(lane);
    (this.pool.getConnection({ type: 'SELECT' }) as Promise<PgClient>).then(
      (client) => {
        client.pipeline = true;
        lane.client = client;
        const waiting = lane.waiting;
        lane.waiting = [];
        for (const w of waiting) this.send(lane, w.text, w.values, w.done, true);
        if (lane.inFlight === 0) this.idle(lane);
      },
      (e: unknown) => {
        this.drop(lane);
        const waiting = lane.waiting;
        lane.waiting = [];
        for (const w of waiting) w.done(e as Error);
      },
    );
    return lane;
  }

  private send(lane: Lane, text: string, values: unknown[], done: Done, retry: boolean): void {
    const client = lane.client!;
    if (lane.inFlight === 1) lane.since = performance.now();
    const name = this.nameOn(client, text);
    let settled = false;
    client.query(name === undefined ? { text, values } : { text, values, name }, (e, result) => {
      // node-postgres may answer a query whose values it could not bind a second time (its Sync's ReadyForQuery)
      if (settled) return;
      settled = true;
      if (e && retry && name !== undefined && stalePlan(e)) {
        this.names.renew(text, name);
        return this.send(lane, text, values, done, false);
      }
      lane.since = performance.now();
      if (e) markIfBroken(client, e);
      if (--lane.inFlight === 0) this.idle(lane);
      done(e, result);
    });
  }

  /**
   * The statement's name on this connection, or undefined to send it unnamed: while its preparation
   * is on the way (a failed Parse would fail the SELECTs written behind it with "prepared statement
   * does not exist" instead of their own error), and past the connection's share of names.
   */
  private nameOn(client: PgClient, text: string): string | undefined {
    const name = this.names.of(text);
    if (name === undefined) return undefined;
    const statements = client.connection;
    if (statements.parsedStatements[name] !== undefined) return name;
    if (statements.submittedNamedStatements[name] !== undefined) return undefined;
    let mine = prepared.get(client);
    if (mine === undefined) prepared.set(client, (mine = new Set()));
    if (!mine.has(name) && mine.size >= NAMES_PER_CONNECTION) return undefined;
    mine.add(name);
    return name;
  }

  /** Nothing in flight: the connection goes back once this turn's SELECTs have had their chance to follow. */
  private idle(lane: Lane): void {
    lane.release ??= setImmediate(() => {
      lane.release = undefined;
      if (lane.inFlight === 0) this.giveBack(lane);
    });
  }

  private giveBack(lane: Lane): void {
    if (lane.release) clearImmediate(lane.release);
    lane.release = undefined;
    this.drop(lane);
    const client = lane.client;
    if (!client) return;
    client.pipeline = false;
    this.pool.releaseConnection(client);
  }

  private drop(lane: Lane): void {
    const i = this.lanes.indexOf(lane);
    if (i >= 0) this.lanes.splice(i, 1);
  }
}
