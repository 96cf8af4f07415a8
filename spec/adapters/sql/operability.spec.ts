/**
 * Failure handling against real servers: the database down at start and during operation (502 with
 * the reason, the service stays up and uses the database again once it is back), a saturated pool
 * (503 after SQL_ACQUIRETIMEOUT), a statement over SQL_TIMEOUT (504, cancelled by the server), a
 * wrong password (502, and the password in no log line), SQL_INITFILE.
 */
import { expect } from 'chai';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Result } from '../../../protocol/message.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';
import type { HiveNode } from '../../../node/node.js';
import { startTestNode } from '../../integration/helpers.js';
import type { EngineHarness } from './harness.js';
import { engineAvailable, openEngine } from './harness.js';
import { freePort, requireServer } from './servers.js';
import { tempDir } from '../../temp.js';
import { sleep } from '../../support/wait.js';

describe('sql service failure handling (adapter)', function () {
  this.timeout(90_000);
  let pg: EngineHarness;
  let node: HiveNode | undefined;
  const call = (channel: string, data: Record<string, string[]> = {}): Promise<Result> =>
    node!.hive.call(channel, makeMessage({ Data: mapOf(data) }), 30_000);

  before(async function () {
    requireServer(this, engineAvailable('postgres'), 'postgres');
    pg = await openEngine('postgres');
    await pg.exec(`CREATE TABLE items (${pg.serial}, name TEXT NOT NULL)`);
    await pg.exec("INSERT INTO items (name) VALUES ('one')");
  });
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });
  after(async () => {
    await pg?.close();
  });

  it('database down at start: the service starts, answers 502 with the reason, logs without the password', async () => {
    const port = await freePort();
    const started = await startTestNode([
      {
        service: 'sql',
        NAME: 'down',
        ...pg.params,
        SQL_PORT: port,
        SQL_PASSWORD: 'sekret-pw-1',
        SQL_STATEMENT: 'select',
        SQL_TABLE: 'items',
      },
    ]);
    node = started.node;
    const r = await call('down');
    expect(r.Code).to.equal(502);
    expect(r.Message).to.match(/^database unavailable: .*ECONNREFUSED/);
    expect(started.logs()).to.contain('does not answer now');
    expect(started.logs()).not.to.contain('sekret-pw-1');
  });

  it('database down at start: the configured names are checked once it answers (500 naming an unknown one), statements wait for that', async () => {
    await pg.server!.stop();
    let logs = (): string => '';
    try {
      const entry = {
        service: 'sql' as const,
        ...pg.params,
        SQL_STATEMENT: 'select',
        SQL_TABLE: 'items',
        SQL_ACQUIRETIMEOUT: '3s',
      };
      const started = await startTestNode([
        { ...entry, NAME: 'good', SQL_COLUMNS: 'name' },
        { ...entry, NAME: 'typo', SQL_COLUMNS: 'nmae' },
      ]);
      node = started.node;
      logs = started.logs;
      expect((await call('good')).Code).to.equal(502);
      expect((await call('typo')).Code).to.equal(502);
    } finally {
      await pg.server!.start();
    }
    const good = await call('good');
    expect(good.Code, good.Message).to.equal(200);
    expect(good.Data.name).to.deep.equal(['one']);
    // a configuration error, not the caller's: 500, and never the name as data
    expect(await call('typo')).to.deep.include({
      Code: 500,
      Message: "SQL_COLUMNS: 'nmae' is not a column of table 'items'",
    });
    expect(await call('typo')).to.deep.include({ Code: 500 });
    expect(
      logs().match(/SQL_COLUMNS: 'nmae' is not a column of table 'items'; statements are answered 500/g) ?? [],
      logs(),
    ).to.have.length(1);
  });

  it('a wrong password is 502 naming the login failure, never the password', async () => {
    const started = await startTestNode([
      {
        service: 'sql',
        NAME: 'badpw',
        ...pg.params,
        SQL_PASSWORD: 'wrong-pw-xyz',
        SQL_STATEMENT: 'select',
        SQL_TABLE: 'items',
      },
    ]);
    node = started.node;
    const r = await call('badpw');
    expect(r.Code).to.equal(502);
    expect(r.Message).to.contain('password authentication failed');
    expect(r.Message + started.logs()).not.to.contain('wrong-pw-xyz');
  });

  it('database stopped during operation: 502 while down, 200 again after the restart, the service never stops', async () => {
    const started = await startTestNode([
      {
        service: 'sql',
        NAME: 'items',
        ...pg.params,
        SQL_STATEMENT: 'select',
        SQL_TABLE: 'items',
        SQL_ACQUIRETIMEOUT: '3s',
      },
    ]);
    node = started.node;
    expect((await call('items')).Code).to.equal(200);
    await pg.server!.stop();
    const down = await call('items');
    expect(down.Code, down.Message).to.equal(502);
    expect((await call('items')).Code).to.equal(502);
    await pg.server!.start();
    const back = await call('items');
    expect(back.Code, back.Message).to.equal(200);
    expect(back.Data.name).to.deep.equal(['one']);
    const logs = started.logs();
    expect(logs.match(/statement failed \(502\)/g) ?? [], logs).to.have.length(1);
    expect(logs).to.match(/database statements succeed again after 2 failures/);
  });

  it('pool exhausted: 503 after SQL_ACQUIRETIMEOUT; statement over SQL_TIMEOUT: 504, cancelled by PostgreSQL', async () => {
    ({ node } = await startTestNode([
      {
        service: 'sql',
        NAME: 'sleep',
        ...pg.params,
        SQL_RAWMODE: true,
        SQL_RAWACTION: 'query',
        SQL_RAWVALUE: 'SELECT pg_sleep({{ s }}) AS slept',
        SQL_POOLSIZE: 1,
        SQL_ACQUIRETIMEOUT: '300ms',
        SQL_TIMEOUT: '5s',
      },
      {
        service: 'sql',
        NAME: 'slow',
        ...pg.params,
        SQL_RAWMODE: true,
        SQL_RAWACTION: 'query',
        SQL_RAWVALUE: 'SELECT pg_sleep({{ s }}) AS slept',
        SQL_TIMEOUT: '300ms',
      },
    ]));
    expect((await call('sleep', { s: ['0'] })).Code).to.equal(200);
    const [held, waited] = await Promise.all([
      call('sleep', { s: ['1.5'] }),
      sleep(100).then(() => call('sleep', { s: ['0'] })),
    ]);
    expect(held.Code).to.equal(200);
    expect(waited.Code, waited.Message).to.equal(503);
    expect(waited.Message).to.match(/no database connection became free within 300 ms/);
    const began = Date.now();
    const slow = await call('slow', { s: ['5'] });
    expect(slow.Code, slow.Message).to.equal(504);
    expect(slow.Message).to.match(/statement timeout/);
    expect(Date.now() - began, 'cut before the 5 s sleep ended').to.be.below(5000);
    expect((await call('slow', { s: ['0'] })).Code).to.equal(200);
  });

  it('SQL_PROTOCOL unix: PostgreSQL through its socket directory', async () => {
    ({ node } = await startTestNode([
      {
        service: 'sql',
        NAME: 'sock',
        ...pg.params,
        SQL_PROTOCOL: 'unix',
        SQL_SERVER: pg.server!.dir,
        SQL_STATEMENT: 'select',
        SQL_TABLE: 'items',
      },
    ]));
    const r = await call('sock');
    expect(r.Code, r.Message).to.equal(200);
    expect(r.Data.name).to.deep.equal(['one']);
  });

  it('MariaDB: a statement over SQL_TIMEOUT is 504 (max_statement_time); SQL_PROTOCOL unix through its socket', async function () {
    requireServer(this, engineAvailable('mariadb'), 'mariadb');
    const maria = await openEngine('mariadb');
    try {
      ({ node } = await startTestNode([
        {
          service: 'sql',
          NAME: 'mslow',
          ...maria.params,
          SQL_RAWMODE: true,
          SQL_RAWACTION: 'query',
          SQL_RAWVALUE: 'SELECT SLEEP({{ s }}) AS slept',
          SQL_TIMEOUT: '300ms',
        },
        {
          service: 'sql',
          NAME: 'msock',
          ...maria.params,
          SQL_PROTOCOL: 'unix',
          SQL_SERVER: join(maria.server!.dir, 'sock'),
          SQL_RAWMODE: true,
          SQL_RAWACTION: 'query',
          SQL_RAWVALUE: 'SELECT 1 AS one',
        },
      ]));
      const began = Date.now();
      const r = await call('mslow', { s: ['5'] });
      expect(r.Code, r.Message).to.equal(504);
      expect(Date.now() - began, 'cut before the 5 s sleep ended').to.be.below(5000);
      expect((await call('mslow', { s: ['0'] })).Code).to.equal(200);
      const sock = await call('msock');
      expect(sock.Code, sock.Message).to.equal(200);
      expect(sock.Data.one).to.deep.equal(['1']);
    } finally {
      await node?.stop(2000);
      node = undefined;
      await maria.close();
    }
  });

  it('SQLite: a statement over SQL_TIMEOUT is 504 and interrupted, so the connection is free again at once', async () => {
    const dir = tempDir('hn-sqlslow-');
    try {
      const spin =
        'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {{ n }}) SELECT COUNT(*) AS n FROM c';
      ({ node } = await startTestNode([
        {
          service: 'sql',
          NAME: 'lslow',
          SQL_DATABASE: join(dir, 's.db'),
          SQL_RAWMODE: true,
          SQL_RAWACTION: 'query',
          SQL_RAWVALUE: spin,
          SQL_TIMEOUT: '200ms',
        },
      ]));
      const began = Date.now();
      const r = await call('lslow', { n: ['1000000000'] });
      expect(r.Code, r.Message).to.equal(504);
      const quick = await call('lslow', { n: ['10'] });
      expect(quick.Code, quick.Message).to.equal(200);
      expect(quick.Data.n).to.deep.equal(['10']);
      // uninterrupted, the count to 10^9 would run for minutes
      expect(Date.now() - began).to.be.below(10_000);
    } finally {
      await node?.stop(2000);
      node = undefined;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('SQL_INITFILE seeds an empty SQLite database, idempotently; a failing statement stops the start', async () => {
    const dir = tempDir('hn-sqlinit-');
    try {
      const init = join(dir, 'init.sql');
      writeFileSync(
        init,
        "CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT);\n-- seed once\nINSERT INTO notes (id, body) SELECT 1, 'a; b $1' WHERE NOT EXISTS (SELECT 1 FROM notes);\n",
      );
      const entry = {
        service: 'sql' as const,
        NAME: 'notes',
        SQL_DATABASE: join(dir, 'n.db'),
        SQL_INITFILE: init,
        SQL_STATEMENT: 'select',
        SQL_TABLE: 'notes',
      };
      ({ node } = await startTestNode([entry]));
      expect((await call('notes')).Data.body).to.deep.equal(['a; b $1']);
      await node.stop(2000);
      ({ node } = await startTestNode([entry]));
      expect((await call('notes')).Data.rowcount).to.deep.equal(['1']);
      await node.stop(2000);
      node = undefined;
      writeFileSync(init, 'CREATE TABLE broken (;');
      let error: unknown;
      await startTestNode([entry]).catch((e: unknown) => (error = e));
      expect(String(error)).to.match(/SQL_INITFILE '.*' statement 1: /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
