/**
 * Where a MariaDB change stream keeps its binlog position: the state file (written whole, refused when
 * it holds something else), positions parsed back, and the keeper's coalesced writes — only the newest
 * position waits while one is written, and a failed write stops reading.
 */
import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../../protocol/errors.js';
import { FilePosition, PositionKeeper } from '../../../actors/sql/binlog-position.js';
import type { PositionMemory } from '../../../actors/sql/binlog-position.js';
import { binlogServerId, parsePosition, positionText } from '../../../actors/sql/binlog-setup.js';
import { changeNames } from '../../../actors/sql/change-names.js';
import { tempDir } from '../../temp.js';

describe('binlog position (change stream on MariaDB)', () => {
  it('is kept in the state file and read back; a new file holds none', async () => {
    const file = join(tempDir('hn-binpos-'), 'pos.json');
    const memory = new FilePosition(file);
    expect(await memory.load()).to.equal(undefined);
    await memory.save('mariadb-bin.000002:1234');
    expect(await new FilePosition(file).load()).to.equal('mariadb-bin.000002:1234');
    expect(JSON.parse(readFileSync(file, 'utf8'))).to.include({
      column: 'binlog position',
      value: 'mariadb-bin.000002:1234',
    });
  });

  it("refuses a state file that holds a poller's mark or no JSON", async () => {
    const file = join(tempDir('hn-binpos-'), 'pos.json');
    writeFileSync(file, JSON.stringify({ column: 'id', type: 'number', value: 5 }));
    const err = await new FilePosition(file).load().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ConfigError);
    expect((err as Error).message).to.match(
      /holds no binlog position of a change stream \(state file .* tracks column 'id', not 'binlog position'\): name another file/,
    );
    writeFileSync(file, 'garbage');
    expect(((await new FilePosition(file).load().catch((e: unknown) => e)) as Error).message).to.contain('is not JSON');
  });

  it('parses file:position and refuses what is none', () => {
    expect(parsePosition('mariadb-bin.000001:328')).to.deep.equal({ file: 'mariadb-bin.000001', position: 328 });
    expect(positionText({ file: 'a:b', position: 4 })).to.equal('a:b:4');
    expect(parsePosition('a:b:4')).to.deep.equal({ file: 'a:b', position: 4 });
    for (const bad of ['', 'nofile', ':5', 'f:x', 'f:-1', 'f:3']) expect(parsePosition(bad), bad).to.equal(undefined);
  });

  it('writes only the newest position while one write is under way, and reports a failed write', async () => {
    const writes: string[] = [];
    let release: (() => void) | undefined;
    let fail = false;
    const memory: PositionMemory = {
      where: 'test',
      load: () => Promise.resolve(undefined),
      save: async (p) => {
        writes.push(p);
        await new Promise<void>((r) => (release = r));
        if (fail) throw new Error('disk full');
      },
    };
    const keeper = new PositionKeeper(memory);
    keeper.advance('f:10');
    keeper.advance('f:20');
    keeper.advance('f:30');
    expect(keeper.current).to.equal('f:30');
    release!();
    await new Promise((r) => setImmediate(r));
    release!();
    await keeper.flushed();
    expect(writes).to.deep.equal(['f:10', 'f:30']);
    fail = true;
    keeper.advance('f:40');
    release!();
    const err = await keeper.flushed().catch((e: unknown) => e);
    expect((err as Error).message).to.equal('disk full');
    expect(keeper.failed).to.equal(err);
  });

  it('reads the replica server id from NAME, and tables without a database in SQL_DATABASE', () => {
    expect(binlogServerId('orders-feed')).to.equal(binlogServerId('orders-feed'));
    expect(binlogServerId('orders-feed')).not.to.equal(binlogServerId('items-feed'));
    expect(binlogServerId('x')).to.be.within(1_000_000, 1_000_000 + 2 ** 31);
    const names = changeNames(
      { SQL_CHANGESLOT: '', SQL_CHANGEPUBLICATION: '', SQL_TABLE: 'orders, shop.items' },
      'Orders-Feed',
      'mariadb',
      'hive',
    );
    expect(names.tables.map((t) => t.qualified)).to.deep.equal(['hive.orders', 'shop.items']);
    expect(names.slot).to.equal('hivenode_orders_feed');
    expect(() =>
      changeNames({ SQL_CHANGESLOT: 'x', SQL_CHANGEPUBLICATION: '', SQL_TABLE: 'orders' }, 'n', 'mariadb', 'hive'),
    ).to.throw(ConfigError, /SQL_CHANGESLOT names a PostgreSQL replication slot/);
  });
});
