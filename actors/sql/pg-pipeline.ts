/**
 * The PostgreSQL SELECTs of the statement path (driver-direct.ts), pipelined on a few connections of
 * Sequelize's pool as named prepared statements — where the service goes beyond a pool of one query
 * per connection (docs/ARCHITECTURE.md, SQL service):
 *
 * - Pipelining (node-postgres `pipeline` mode) on the lanes of select-lanes.ts: a lane takes up to
 *   DEPTH SELECTs before the answer to the first has come, each with its own Sync — so one failing
 *   SELECT fails alone, as on a connection of its own.
 * - Named prepared statements: the server parses and plans a text once per connection instead of at
 *   every call. A statement whose cached plan no longer fits the table (a column added under
 *   `SELECT *`: "cached plan must not change result type") is prepared again under a new name, and
 *   the SELECT run again.
 *
 * Measured on 2 cores with the server beside the node (bench/sql.ts): a pool of 10 connections spent
 * ~65 µs of server CPU and ~43 µs of node CPU a SELECT by key; four pipelined connections with named
 * statements ~22 µs and ~25 µs.
 */

import type { LaneDone, LaneDriver } from './select-lanes.js';

/** The little of a node-postgres Client this path uses (the project carries no types for pg). */
export interface PgClient {
  query(
    config: { text: string; values: unknown[]; name?: string },
    done: (e: Error | null, result: { rows: unknown[] }) => void,
  ): void;
  /** node-postgres: queries are written without waiting for the answers before them. */
  pipeline: boolean;
  /** Sequelize's pool drops a connection marked so when it comes back. */
  _invalid?: boolean;
  /** node-postgres's record of the statements prepared on the connection, and of those sent to be. */
  connection: { parsedStatements: Record<string, string>; submittedNamedStatements: Record<string, string> };
}

/** SELECTs written on one connection before their answers: past this a further connection is taken. */
const DEPTH = 8;
/** Statement names kept; a text beyond them runs unnamed (parsed at each call, as before). */
const NAMES_KEPT = 256;
/** Prepared statements per connection at most: the server keeps each until the connection closes. */
const NAMES_PER_CONNECTION = 64;

/** The failures on which Sequelize marks a PostgreSQL connection invalid (its query.js). */
const BROKEN_PG =
  /ECONNRESET|Unable to set non-blocking to true|SSL SYSCALL error: EOF detected|Local: Authentication failure|^ Query read timeout$/i;

/** What Sequelize's PostgreSQL query does with a broken connection: marked, the pool drops it when it comes back. */
export function markIfBroken(client: Pick<PgClient, '_invalid'>, e: Error): void {
  if (BROKEN_PG.test(`${(e as NodeJS.ErrnoException).code ?? ''} ${e.message}`)) client._invalid = true;
}

/** PostgreSQL's refusal to run a prepared statement whose result columns changed (feature_not_supported). */
const stalePlan = (e: Error): boolean =>
  (e as { code?: string }).code === '0A000' && /cached plan must not change result type/.test(e.message);

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

/** node-postgres on a lane (select-lanes.ts): pipelined, as named prepared statements. */
export class PgPipeline implements LaneDriver<PgClient> {
  readonly depth = DEPTH;
  private readonly names = new StatementNames(`hivenode_${instances++}_`);

  taken(client: PgClient): void {
    client.pipeline = true;
  }

  givenBack(client: PgClient): void {
    client.pipeline = false;
  }

  run(client: PgClient, text: string, values: unknown[], done: LaneDone, retry = true): void {
    const name = this.nameOn(client, text);
    let settled = false;
    client.query(name === undefined ? { text, values } : { text, values, name }, (e, result) => {
      // node-postgres may answer a query whose values it could not bind a second time (its Sync's ReadyForQuery)
      if (settled) return;
      settled = true;
      if (e && retry && name !== undefined && stalePlan(e)) {
        this.names.renew(text, name);
        return this.run(client, text, values, done, false);
      }
      if (e) markIfBroken(client, e);
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
}
