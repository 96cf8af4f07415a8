import { expect } from 'chai';
import { databaseOptions } from '../../../actors/sql/connection-options.js';
import { Database } from '../../../actors/sql/database.js';
import { sqliteBind } from '../../../actors/sql/outcome.js';
import { compileConfig } from '../../../config/resolve.js';
import { SQL_PARAMS } from '../../../config/sql.js';
import { ConfigError } from '../../../protocol/errors.js';

function options(values: Record<string, string>) {
  return databaseOptions(compileConfig('sql', SQL_PARAMS, [{ source: 'test', values: Object.entries(values) }]).values);
}

describe('sql database options', () => {
  it("uses the engine's usual port unless SQL_PORT is set explicitly", () => {
    const ports = (['postgres', 'mysql', 'mariadb', 'mssql', 'oracle'] as const).map(
      (e) => options({ SQL_ENGINE: e, SQL_DATABASE: 'd' }).port,
    );
    expect(ports).to.deep.equal([5432, 3306, 3306, 1433, 1521]);
    expect(options({ SQL_ENGINE: 'postgres', SQL_DATABASE: 'd', SQL_PORT: '6543' }).port).to.equal(6543);
    expect(options({ SQL_ENGINE: 'mssql', SQL_DATABASE: 'd', SQL_PORT: '3306' }).port).to.equal(3306);
  });

  it('pool, timeouts and their defaults (10 connections, 30 s statements, 10 s to get a connection)', () => {
    expect(options({})).to.deep.include({
      engine: 'sqlite',
      poolSize: 10,
      timeoutMs: 30_000,
      acquireTimeoutMs: 10_000,
      host: 'localhost',
    });
    expect(options({ SQL_POOLSIZE: '3', SQL_TIMEOUT: '250ms', SQL_ACQUIRETIMEOUT: '2s' })).to.deep.include({
      poolSize: 3,
      timeoutMs: 250,
      acquireTimeoutMs: 2000,
    });
  });

  it('refuses what cannot connect', () => {
    expect(() => options({ SQL_PROTOCOL: 'udp' })).to.throw(ConfigError, /SQL_PROTOCOL/);
    expect(() => options({ SQL_ENGINE: 'oracle', SQL_PROTOCOL: 'unix', SQL_SERVER: '/s' })).to.throw(
      ConfigError,
      /not oracle/,
    );
    expect(() => options({ SQL_ENGINE: 'postgres' })).to.throw(ConfigError, /needs a database name/);
  });

  it('builds a pool for MS SQL Server and Oracle without connecting (their drivers load; no server here)', async () => {
    for (const engine of ['mssql', 'oracle'] as const) {
      const db = new Database(
        options({
          SQL_ENGINE: engine,
          SQL_DATABASE: 'd',
          SQL_SERVER: 'db.invalid',
          SQL_USERNAME: 'u',
          SQL_PASSWORD: 'p',
        }),
      );
      expect(db.dialect).to.equal(engine);
      expect(db.describe()).to.equal(`${engine} database 'd' at db.invalid:${engine === 'mssql' ? 1433 : 1521} as 'u'`);
      await db.close();
    }
  });

  it('SQLite gets numbers for text that is exactly a number, nothing else', () => {
    expect(
      sqliteBind({ a: '42', b: '-1.5', c: '007', d: '1e3', e: 'x', f: null, g: ' 1', h: '12345678901234567890' }),
    ).to.deep.equal({ a: 42, b: -1.5, c: '007', d: '1e3', e: 'x', f: null, g: ' 1', h: '12345678901234567890' });
  });
});
