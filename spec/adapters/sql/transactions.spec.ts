/**
 * Raw transactions (SQL_RAWTRANSACTION) against real engines — PostgreSQL and MariaDB
 * servers started here, and a SQLite file — through a node on the embedded hive: several statements
 * in one transaction, all or nothing; `affected` per statement and the last query's rows; placeholders
 * bound per statement; a `;` in literals, quoted identifiers, comments and dollar quotes not splitting;
 * the override path; SQL_TIMEOUT over the whole transaction with the connection given back.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { Result } from '../../../protocol/message.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../../integration/helpers.js';
import type { EngineHarness, TestEngine } from './harness.js';
import { TEST_ENGINES, engineAvailable, openEngine } from './harness.js';
import { requireServer } from './servers.js';
import { tempDir } from '../../temp.js';
import { HIVENODE_ARGS } from '../../support/hivenode-bin.js';

describe('sql raw transactions: start failures (adapter)', function () {
  this.timeout(60_000);
  /** Starts `hivenode sql` with the parameters: the exit status and what it wrote to stderr. */
  const start = (params: Record<string, string>): { status: number | null; stderr: string } => {
    const args = Object.entries({ NAME: 'tx', SQL_DATABASE: join(tempDir('hn-sqltx-'), 't.db'), ...params }).map(
      ([k, v]) => `-${k}=${v}`,
    );
    return spawnSync(process.execPath, [...HIVENODE_ARGS, 'sql', ...args], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      timeout: 30_000,
    });
  };
  const expectOneLine = (r: { status: number | null; stderr: string }, text: string): void => {
    expect(r.status, r.stderr).to.equal(2);
    expect(r.stderr.trim().split('\n'), r.stderr).to.deep.equal([`hivenode: ${text}`]);
  };

  it('SQL_RAWTRANSACTION without SQL_RAWMODE is one clear line', () => {
    expectOneLine(
      start({ SQL_RAWTRANSACTION: 'true', SQL_STATEMENT: 'select', SQL_TABLE: 't' }),
      'SQL_RAWTRANSACTION needs SQL_RAWMODE=true: it runs the statements of SQL_RAWVALUE as one transaction',
    );
  });

  it('configured text over the statement limit stops the start', () => {
    const text = Array.from({ length: 101 }, (_, i) => `SELECT ${i}`).join('; ');
    expectOneLine(
      start({ SQL_RAWMODE: 'true', SQL_RAWTRANSACTION: 'true', SQL_RAWVALUE: text }),
      'SQL_RAWVALUE: 101 statements; a raw transaction holds at most 100',
    );
  });
});

for (const engine of TEST_ENGINES) {
  describe(`sql raw transactions on ${engine} (adapter)`, function () {
    this.timeout(60_000);
    let db: EngineHarness;
    let node: HiveNode;
    const call = (
      channel: string,
      data: Record<string, string[]> = {},
      control: Record<string, string[]> = {},
    ): Promise<Result> => node.hive.call(channel, makeMessage({ Data: mapOf(data), Control: mapOf(control) }), 20_000);
    const names = async (): Promise<string[]> =>
      (await db.rows<{ name: string }>('SELECT name FROM accounts ORDER BY id')).map((r) => r.name);
    // a quoted identifier in the engine's own quotes (MariaDB reads "…" as a string)
    const q = (id: string): string => (engine === 'mariadb' ? `\`${id}\`` : `"${id}"`);
    // a statement that takes about `s` seconds
    const sleep = (s: string): string =>
      engine === 'postgres'
        ? `SELECT pg_sleep(${s}) AS slept`
        : engine === 'mariadb'
          ? `SELECT SLEEP(${s}) AS slept`
          : 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT COUNT(*) AS slept FROM c';

    before(async function () {
      requireServer(this, engineAvailable(engine as TestEngine), engine);
      db = await openEngine(engine);
      await db.exec(`CREATE TABLE accounts (${db.serial}, name VARCHAR(100) NOT NULL UNIQUE, balance INT NOT NULL)`);
      const p = { ...db.params, SQL_RAWMODE: true, SQL_RAWTRANSACTION: true };
      ({ node } = await startTestNode([
        {
          service: 'sql',
          NAME: 'transfer',
          ...p,
          SQL_RAWVALUE: `INSERT INTO accounts (name, balance) VALUES ({{ name }}, {{ amount }});
            UPDATE accounts SET balance = balance - {{ amount }} WHERE name = {{ from }};
            SELECT name, balance FROM accounts WHERE name IN ({{ name }}, {{ from }}) ORDER BY name;`,
        },
        {
          service: 'sql',
          NAME: 'texts',
          ...p,
          SQL_RAWVALUE:
            ";; INSERT INTO accounts (name, balance) VALUES ('semi;colon', 1); -- a comment; with a semicolon\n" +
            `/* a block; comment */ INSERT INTO accounts (name, balance) VALUES ('x', 2) ;;\n` +
            `UPDATE accounts SET balance = balance + 1 WHERE name = 'semi;colon';\n` +
            `SELECT name AS ${q('who;name')}, balance FROM accounts WHERE name IN ('semi;colon', 'x') ORDER BY id;\n;`,
        },
        // one pooled connection: a transaction that failed must have given it back for the next one to run
        {
          service: 'sql',
          NAME: 'ctrl',
          ...p,
          SQL_RAWVALUE: 'SELECT 1 AS one',
          SQL_RAWVALUE_CTRL: 'sql',
          SQL_ALLOWCLAUSECTRL: true,
          SQL_POOLSIZE: 1,
          SQL_ACQUIRETIMEOUT: '2s',
        },
        {
          service: 'sql',
          NAME: 'slow',
          ...p,
          SQL_POOLSIZE: 1,
          SQL_TIMEOUT: '1s',
          SQL_RAWVALUE: `INSERT INTO accounts (name, balance) VALUES ({{ name }}, 0); ${sleep('0.6')}; ${sleep('0.6')}`,
        },
        {
          service: 'sql',
          NAME: 'quick',
          ...p,
          SQL_RAWVALUE:
            "INSERT INTO accounts (name, balance) VALUES ({{ name }}, 0); SELECT COUNT(*) AS n FROM accounts WHERE name LIKE 'c-%'",
        },
      ]));
    });
    beforeEach(async () => {
      await db.exec('DELETE FROM accounts');
      await db.exec("INSERT INTO accounts (name, balance) VALUES ('ann', 100)");
    });
    after(async () => {
      await node?.stop(2000);
      await db?.close();
    });

    it('INSERT; UPDATE; SELECT: affected per statement and the SELECT rows; placeholders bound per statement', async () => {
      const r = await call('transfer', { name: ['bob'], amount: ['30'], from: ['ann'] });
      expect(r.Code, r.Message).to.equal(200);
      expect(r.Data.affected).to.deep.equal(['1', '1', '2']);
      expect(r.Data.name).to.deep.equal(['ann', 'bob']);
      expect(r.Data.balance).to.deep.equal(['70', '30']);
      expect(r.Data.rowcount).to.deep.equal(['2']);
      expect(r.List).to.deep.equal([
        { name: 'ann', balance: 70 },
        { name: 'bob', balance: 30 },
      ]);
      expect(await names()).to.deep.equal(['ann', 'bob']);
    });

    it('a failing second statement undoes the first: the Code of its error, naming the statement', async () => {
      // the INSERT of an existing name violates UNIQUE in the 1st statement: nothing runs after it
      const dup = await call('transfer', { name: ['ann'], amount: ['1'], from: ['ann'] });
      expect(dup.Code, dup.Message).to.equal(400);
      expect(dup.Message).to.match(/^statement 1 of 3: the database refused the values: /);
      // a value the 2nd statement cannot use (not a number; SQLite's text arithmetic gives 0, so NULL there)
      const bad = await call(
        'ctrl',
        { n: ['carl'] },
        {
          sql: [
            'INSERT INTO accounts (name, balance) VALUES ({{ n }}, 5); UPDATE accounts SET balance = NULL WHERE name = {{ n }}; SELECT 1 AS one',
          ],
        },
      );
      expect(bad.Code, bad.Message).to.equal(400);
      expect(bad.Message).to.match(/^statement 2 of 3: the database refused the values: /);
      // a statement the database cannot run at all is its 502
      const broken = await call(
        'ctrl',
        { n: ['dora'] },
        {
          sql: [
            'INSERT INTO accounts (name, balance) VALUES ({{ n }}, 5); UPDATE no_such_table SET x = 1; SELECT 1 AS one',
          ],
        },
      );
      expect(broken.Code, broken.Message).to.equal(502);
      expect(broken.Message).to.match(/^statement 2 of 3: database error: /);
      expect(await names()).to.deep.equal(['ann']);
      // and the service goes on: the next transaction commits
      expect((await call('transfer', { name: ['eve'], amount: ['5'], from: ['ann'] })).Code).to.equal(200);
      expect(await names()).to.deep.equal(['ann', 'eve']);
    });

    it('a ; in a string, a quoted identifier or a comment does not split; empty statements are ignored', async () => {
      const r = await call('texts');
      expect(r.Code, r.Message).to.equal(200);
      expect(r.Data.affected).to.deep.equal(['1', '1', '1', '2']);
      expect(r.Data['who;name']).to.deep.equal(['semi;colon', 'x']);
      expect(r.Data.balance).to.deep.equal(['2', '2']);
    });

    it('PostgreSQL: a dollar-quoted body with ; stays one statement', async function () {
      if (engine !== 'postgres') this.skip();
      const body = 'CREATE FUNCTION add_one(i int) RETURNS int AS $fn$ SELECT i + 1; $fn$ LANGUAGE sql';
      const r = await call(
        'ctrl',
        { v: ['41'] },
        { sql: [`${body}; SELECT add_one({{ v }}::int) AS answer, $$a;b$$ AS text; DROP FUNCTION add_one(int)`] },
      );
      expect(r.Code, r.Message).to.equal(200);
      expect(r.Data.answer).to.deep.equal(['42']);
      expect(r.Data.text).to.deep.equal(['a;b']);
      expect(r.Data.affected).to.have.length(3);
    });

    it('DDL statements run in a transaction too; each statement after the first is told the time left', async () => {
      const r = await call(
        'ctrl',
        { v: ['7'] },
        {
          sql: [
            'CREATE TABLE scratch (a INT); INSERT INTO scratch (a) VALUES ({{ v }}); SELECT a FROM scratch; DROP TABLE scratch',
          ],
        },
      );
      expect(r.Code, r.Message).to.equal(200);
      expect(r.Data.affected).to.deep.equal(['0', '1', '1', '0']);
      expect(r.Data.a).to.deep.equal(['7']);
    });

    it('the override (SQL_RAWVALUE_CTRL with SQL_ALLOWCLAUSECTRL) is split and run as one transaction too', async () => {
      const r = await call(
        'ctrl',
        { a: ['fay'], b: ['gus'] },
        {
          sql: [
            'INSERT INTO accounts (name, balance) VALUES ({{ a }}, 1); INSERT INTO accounts (name, balance) VALUES ({{ b }}, 2)',
          ],
        },
      );
      expect(r.Code, r.Message).to.equal(200);
      expect(r.Data.affected).to.deep.equal(['1', '1']);
      expect(r.List).to.deep.equal([]);
      const undone = await call(
        'ctrl',
        { a: ['hal'], b: ['ann'] },
        {
          sql: [
            'INSERT INTO accounts (name, balance) VALUES ({{ a }}, 1); INSERT INTO accounts (name, balance) VALUES ({{ b }}, 2)',
          ],
        },
      );
      expect(undone.Code, undone.Message).to.equal(400);
      expect(undone.Message).to.match(/^statement 2 of 2: /);
      expect(await names()).to.deep.equal(['ann', 'fay', 'gus']);
      const many = await call('ctrl', {}, { sql: [Array.from({ length: 101 }, () => 'SELECT 1').join(';')] });
      expect(many).to.deep.include({
        Code: 413,
        Message: "control 'sql' (SQL_RAWVALUE): 101 statements; a raw transaction holds at most 100",
      });
      const missing = await call(
        'ctrl',
        { a: ['ivy'] },
        { sql: ['INSERT INTO accounts (name, balance) VALUES ({{ a }}, 1); SELECT {{ b }} AS b'] },
      );
      expect(missing).to.deep.include({
        Code: 400,
        Message: "Data 'b' is missing (it fills a placeholder of SQL_RAWVALUE statement 2 of 2)",
      });
      expect(await names()).to.deep.equal(['ann', 'fay', 'gus']);
    });

    it('SQL_TIMEOUT covers the whole transaction: 504, rolled back, the connection given back', async () => {
      const began = Date.now();
      const r = await call('slow', { name: ['slowpoke'] });
      expect(r.Code, r.Message).to.equal(504);
      expect(r.Message).to.match(
        /^the transaction did not finish within 1000 ms \(SQL_TIMEOUT covers all its statements\) and was rolled back/,
      );
      // each statement alone is within the limit; together they are not (SQLite's spins until interrupted)
      expect(Date.now() - began).to.be.below(engine === 'sqlite' ? 3000 : 4000);
      // the pool of one connection is free again and nothing of the transaction stayed
      const again = await call('transfer', { name: ['jon'], amount: ['1'], from: ['ann'] });
      expect(again.Code, again.Message).to.equal(200);
      expect(await names()).to.deep.equal(['ann', 'jon']);
    });

    it('PostgreSQL: a transaction whose connection is lost answers 502 without Sequelize writing to the console; the next one runs', async function () {
      if (engine !== 'postgres') this.skip();
      const warned: string[] = [];
      const original = console.warn;
      console.warn = (...args: unknown[]) => void warned.push(args.map(String).join(' '));
      let r: Result;
      let next: Result;
      try {
        // the statement ends its own connection: the ROLLBACK after it cannot run
        r = await call('ctrl', {}, { sql: ['SELECT 1 AS one; SELECT pg_terminate_backend(pg_backend_pid())'] });
        // one pooled connection: this waits for the failed transaction's clean-up, where the line was written
        next = await call('ctrl', {}, { sql: ['SELECT 1 AS one'] });
      } finally {
        console.warn = original;
      }
      expect(r.Code, r.Message).to.equal(502);
      expect(next.Code, next.Message).to.equal(200);
      expect(warned, 'Sequelize\'s own "Rolling back transaction … failed" line').to.deep.equal([]);
    });

    it('concurrent transactions on one service each commit whole', async () => {
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => call('quick', { name: [`c-${i}`] })));
      for (const a of answers) expect(a.Code, a.Message).to.equal(200);
      expect(answers.map((a) => a.Data.affected![0])).to.deep.equal(Array.from({ length: 8 }, () => '1'));
      expect(
        (await db.rows<{ n: number }>("SELECT COUNT(*) AS n FROM accounts WHERE name LIKE 'c-%'"))[0]!.n,
      ).to.satisfy((n: unknown) => Number(n) === 8);
    });
  });
}
