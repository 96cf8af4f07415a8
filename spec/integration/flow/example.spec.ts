/**
 * examples/flows/order-intake.yaml runs as its comments say: started as written (its ports, database
 * and store moved to free ones), every curl line of its header answers as promised, the failed order's
 * row is deleted by the compensation, the shipped one is logged over syslog, and the replay line ships
 * the failed order after all.
 */
import { expect } from 'chai';
import { createSocket } from 'node:dgram';
import type { Socket } from 'node:dgram';
import { createServer } from 'node:net';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import type { ExampleAnswer as Answer, RunningExample } from '../example-node.js';
import { startExample } from '../example-node.js';
import { until } from '../../support/wait.js';

const EXAMPLE = new URL('../../../examples/flows/order-intake.yaml', import.meta.url).pathname;

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

const rows = (file: string): Promise<Array<{ id: string; item: string }>> =>
  new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, sqlite3.OPEN_READONLY);
    db.all('SELECT id, item FROM orders ORDER BY id', (err, r) =>
      db.close(() => (err ? reject(err) : resolve(r as Array<{ id: string; item: string }>))),
    );
  });

describe('examples/flows/order-intake.yaml', function () {
  this.timeout(60_000);
  let example: RunningExample | undefined;
  let syslog: Socket | undefined;
  after(async () => {
    await example?.node.kill('SIGTERM');
    syslog?.close();
  });

  it('starts as written; the header lines answer as its comments say; the compensation deletes the row; replay ships it', async () => {
    const lines: string[] = [];
    syslog = createSocket('udp4').on('message', (m) => lines.push(m.toString()));
    await new Promise<void>((r) => syslog!.bind(0, '127.0.0.1', r));
    const udp = syslog.address().port;
    const port = await freePort();
    let db = '';
    example = await startExample(EXAMPLE, 'O', 8083, (text, dir) => {
      db = join(dir, 'orders.sqlite');
      return text
        .replaceAll('8083', String(port))
        .replace('RemotePort: 10515', `RemotePort: ${udp}`)
        .replace('./order-intake.sqlite', db)
        .replaceAll('./order-intake-store', join(dir, 'store'));
    });
    const { text, run } = example;
    const header = [...text.matchAll(/^# {3}(\$O .*?)(?:\s+#[^']*)?$/gm)].map((m) => m[1]!);
    expect(header).to.have.length(5);
    const [shipped, refused, failedList, status] = header.slice(0, 4).map((l) => run(l)) as [
      Answer,
      Answer,
      Answer,
      Answer,
    ];
    expect(shipped).to.deep.include({ Code: 200, Data: { id: ['o-1'], shipment: ['S-o-1'] } });
    expect(refused.Code).to.equal(503);
    expect(refused.Message).to.equal('order o-2 not shipped (the carrier is down); its row was deleted');
    expect(failedList.Data.objects).to.have.length(1);
    expect(status.Data).to.deep.include({ succeeded: ['1'], failed: ['1'], queuesize: ['0'] });
    expect(await rows(db)).to.deep.equal([{ id: 'o-1', item: 'apple' }]);
    await until(() => lines.length === 1);
    expect(lines[0]).to.contain('order o-1 (apple) taken, shipment S-o-1');

    const replay = run(header[4]!.replace('<run key>', failedList.Data.objects![0]!));
    expect(replay.Code, replay.Message).to.equal(200);
    await until(() => lines.length === 2);
    expect(lines[1]).to.contain('order o-2 (pear) taken, shipment S-o-2');
    expect(await rows(db)).to.deep.equal([
      { id: 'o-1', item: 'apple' },
      { id: 'o-2', item: 'pear' },
    ]);
  });
});
