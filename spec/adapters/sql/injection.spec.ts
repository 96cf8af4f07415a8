/**
 * SQL injection on PostgreSQL with `log_statement=all`: every generated payload (injection-payloads.ts,
 * over 200) goes into every placeholder of a SELECT, INSERT, UPDATE, DELETE, raw query and a LIMIT.
 * Afterwards the server's own statement log must show only the configured statements (plus the
 * connection set-up Sequelize sends), each payload must have come back byte for byte as data, no
 * time-delay payload may have slept, and the tables must be intact.
 */
import { expect } from 'chai';
import { readFileSync, statSync } from 'node:fs';
import type { Result } from '../../../protocol/message.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../../integration/helpers.js';
import type { EngineHarness } from './harness.js';
import { engineAvailable, openEngine } from './harness.js';
import { injectionPayloads } from './injection-payloads.js';
import { requireServer } from './servers.js';

/** The statements the services may send, as PostgreSQL logs them. */
const CONFIGURED = new Set([
  'SELECT "id", "name" FROM "victims" WHERE (name = $1 OR note LIKE $2)',
  'INSERT INTO "victims" ("name", "note") VALUES ($1, $2)',
  'UPDATE "victims" SET "note" = $1 WHERE name = $2',
  'DELETE FROM "victims" WHERE name = $1 AND note = $2',
  'SELECT $1::text AS v, length($1) AS n',
  'SELECT "id" FROM "victims" ORDER BY "id" LIMIT $1',
]);
/**
 * What Sequelize sends when it opens a connection (authenticate, version, session settings), and the
 * catalog read checking the configured names at start (the table name bound, not spliced).
 */
const CONNECTION_SETUP = [
  /^SELECT attname AS name FROM pg_catalog\.pg_attribute WHERE attrelid = to_regclass\(\$1\) AND attnum > 0 AND NOT attisdropped$/,
  /^SELECT 1\+1 AS result$/,
  /^SHOW SERVER_VERSION$/i,
  /^SET client_min_messages TO warning;/,
  /^SET TIME ZONE /,
  /^WITH ranges AS \(\s*SELECT pg_range\.rngtypid, pg_type\.typname AS rngtypname/,
];

function loggedStatements(log: string): string[] {
  const out: string[] = [];
  for (const line of log.split('\n')) {
    const m = /^LOG:\s+(?:statement|execute [^:]*):\s(.*)$/.exec(line);
    if (m) out.push(m[1]!);
  }
  return out;
}

describe('sql injection on PostgreSQL with statement logging (adapter)', function () {
  this.timeout(180_000);
  let db: EngineHarness;
  let node: HiveNode | undefined;
  const call = (channel: string, data: Record<string, string[]>): Promise<Result> =>
    node!.hive.call(channel, makeMessage({ Data: mapOf(data) }), 30_000);

  before(async function () {
    requireServer(this, engineAvailable('postgres'), 'postgres');
    db = await openEngine('postgres', { logStatements: true });
  });
  after(async () => {
    await node?.stop(2000);
    await db?.close();
  });

  it('runs only the configured statements for 200+ payloads in every placeholder; data round-trips; tables intact', async () => {
    await db.exec(`CREATE TABLE victims (${db.serial}, name TEXT NOT NULL, note TEXT)`);
    await db.exec(`CREATE TABLE canary (${db.serial}, secret TEXT NOT NULL)`);
    await db.exec("INSERT INTO victims (name, note) VALUES ('alice', 'a'), ('bob', 'b')");
    await db.exec("INSERT INTO canary (secret) VALUES ('s1'), ('s2'), ('s3')");
    const logFrom = statSync(db.server!.logFile).size;
    const p = db.params;
    ({ node } = await startTestNode([
      {
        service: 'sql',
        NAME: 'sel',
        ...p,
        SQL_STATEMENT: 'select',
        SQL_TABLE: 'victims',
        SQL_COLUMNS: 'id, name',
        SQL_WHERE: 'name = {{ a }} OR note LIKE {{ b }}',
      },
      {
        service: 'sql',
        NAME: 'ins',
        ...p,
        SQL_STATEMENT: 'insert',
        SQL_TABLE: 'victims',
        SQL_COLUMNS: 'name, note',
        SQL_VALUEPARAMS: 'data_name, data_note',
      },
      {
        service: 'sql',
        NAME: 'upd',
        ...p,
        SQL_STATEMENT: 'update',
        SQL_TABLE: 'victims',
        SQL_COLUMNS: 'note',
        SQL_VALUEPARAMS: 'data_note',
        SQL_WHERE: 'name = {{ where_name }}',
      },
      {
        service: 'sql',
        NAME: 'del',
        ...p,
        SQL_STATEMENT: 'delete',
        SQL_TABLE: 'victims',
        SQL_WHERE: 'name = {{ where_name }} AND note = {{ where_note }}',
      },
      {
        service: 'sql',
        NAME: 'raw',
        ...p,
        SQL_RAWMODE: true,
        SQL_RAWACTION: 'query',
        SQL_RAWVALUE: 'SELECT {{ v }}::text AS v, length({{ v }}) AS n',
      },
      {
        service: 'sql',
        NAME: 'lim',
        ...p,
        SQL_STATEMENT: 'select',
        SQL_TABLE: 'victims',
        SQL_COLUMNS: 'id',
        SQL_ORDERBY: 'id',
        SQL_LIMIT: '{{ n }}',
      },
    ]));
    const payloads = injectionPayloads();
    expect(payloads.length).to.be.at.least(200);
    let slowest = 0;
    const timed = async (channel: string, data: Record<string, string[]>): Promise<Result> => {
      const t = Date.now();
      const r = await call(channel, data);
      slowest = Math.max(slowest, Date.now() - t);
      return r;
    };
    for (const payload of payloads) {
      const where = JSON.stringify(payload);
      const ins = await timed('ins', { data_name: [payload], data_note: [payload] });
      expect(ins.Code, `${where}: ${ins.Message}`).to.equal(200);
      const sel = await timed('sel', { a: [payload], b: [payload] });
      expect(sel.Code, where).to.equal(200);
      expect(sel.Data.name, where).to.include(payload);
      const upd = await timed('upd', { data_note: [`${payload}!`], where_name: [payload] });
      expect(upd.Data.affected, where).to.deep.equal(['1']);
      const raw = await timed('raw', { v: [payload] });
      expect(raw.Data.v, where).to.deep.equal([payload]);
      const del = await timed('del', { where_name: [payload], where_note: [`${payload}!`] });
      expect(del.Data.affected, where).to.deep.equal(['1']);
      const lim = await timed('lim', { n: [payload] });
      expect(lim.Code, where).to.equal(400);
    }
    // no pg_sleep/SLEEP/WAITFOR ran: each would hold its call for at least 5 s
    expect(slowest).to.be.below(5000);
    await node.stop(2000);
    node = undefined;

    const statements = loggedStatements(readFileSync(db.server!.logFile, 'utf8').slice(logFrom));
    const unexpected = [
      ...new Set(statements.filter((s) => !CONFIGURED.has(s) && !CONNECTION_SETUP.some((re) => re.test(s)))),
    ];
    expect(unexpected, 'statements other than the configured ones reached PostgreSQL').to.deep.equal([]);
    const configuredRuns = statements.filter((s) => CONFIGURED.has(s)).length;
    // the LIMIT call is refused before any SQL is sent: 5 statements per payload
    expect(configuredRuns).to.equal(payloads.length * 5);

    expect(await db.rows('SELECT name, note FROM victims ORDER BY id')).to.deep.equal([
      { name: 'alice', note: 'a' },
      { name: 'bob', note: 'b' },
    ]);
    expect(await db.rows('SELECT secret FROM canary ORDER BY id')).to.deep.equal([
      { secret: 's1' },
      { secret: 's2' },
      { secret: 's3' },
    ]);
    const tables = await db.rows<{ tablename: string }>(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
    );
    expect(tables.map((t) => t.tablename)).to.deep.equal(['canary', 'victims']);
  });
});
