/**
 * examples/flows/nightly-report.yaml runs as its comments say: started as written (its port, database,
 * stores and report file moved to free ones), the schedule stored, fired now, and the flow's run
 * selecting the rows, mapping each to an exec writing its line, in the order of the rows.
 */
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { RunningExample } from '../example-node.js';
import { startExample } from '../example-node.js';
import { until } from '../../support/wait.js';

const EXAMPLE = new URL('../../../examples/flows/nightly-report.yaml', import.meta.url).pathname;

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

describe('examples/flows/nightly-report.yaml', function () {
  this.timeout(60_000);
  let example: RunningExample | undefined;
  after(async () => {
    await example?.node.kill('SIGTERM');
  });

  it('starts as written; the schedule is stored and fired now; the run writes one report line per row, in order', async () => {
    const port = await freePort();
    let report = '';
    example = await startExample(EXAMPLE, 'R', 8084, (text, dir) => {
      report = join(dir, 'nightly-report.txt');
      return text
        .replaceAll('8084', String(port))
        .replace('./nightly-report.sqlite', join(dir, 'sales.sqlite'))
        .replace('./nightly-report-queue', join(dir, 'queue'))
        .replace('./nightly-report-store', join(dir, 'store'))
        .replace('>> ./nightly-report.txt', `>> ${report}`);
    });
    const { text, run } = example;
    const header = [...text.matchAll(/^# {3}(\$R\/.*?)\s+#[^']*$/gm)].map((m) => m[1]!);
    expect(header).to.have.length(3);
    const stored = run(header[0]!);
    expect(stored.Code, stored.Message).to.equal(200);
    const fired = run(header[1]!);
    expect(fired.Code, fired.Message).to.equal(200);
    await until(() => existsSync(report) && readFileSync(report, 'utf8').split('\n').length === 4, 15_000);
    expect(readFileSync(report, 'utf8')).to.equal('sales north 1200\nsales south 950\nsales west 410\n');
    let status = run(header[2]!);
    await until(() => (status = run(header[2]!)).Data.succeeded?.[0] === '1', 5000);
    expect(status.Data).to.deep.include({ succeeded: ['1'], failed: ['0'] });
  });
});
