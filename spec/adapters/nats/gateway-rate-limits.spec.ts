/**
 * Rate limits held for the whole hive (README, Rate limits; actors/gateway/rate-sync.ts): two nodes on
 * one nats-server, each with a gateway of the same NAME and RateLimits, loaded at once by two wrk
 * runs (bounded in time): the hive admits the limit within 10 %, not the limit once per gateway. And
 * a load on one node alone still gets the whole limit.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { HiveNode } from '../../../node/node.js';
import { tempDir } from '../../temp.js';
import { suiteNatsServer } from './server.js';
import { until } from '../../support/wait.js';

const run = promisify(execFile);
const LIMIT = 100;

interface Gateway {
  node: HiveNode;
  url: string;
  status(): Record<string, number>;
}

describe('NATS hive: rate limits shared by the gateways of one NAME', function () {
  this.timeout(90_000);
  const server = suiteNatsServer();
  const nodes: HiveNode[] = [];
  let script: string;
  before(() => {
    const dir = tempDir('hn-ratehive-');
    script = join(dir, 'post.lua');
    writeFileSync(
      script,
      'wrk.method = "POST"\nwrk.body = \'{"a":["1"]}\'\nwrk.headers["Content-Type"] = "application/json"\n',
    );
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.stop(2000)));
  });

  async function gateway(name: string): Promise<Gateway> {
    const hive = [
      ['SERVERHOST', server().url],
      ['SERVERAUTH', server().token],
    ] as const;
    const node = await HiveNode.start({
      name,
      logStream: new PassThrough().resume(),
      services: [
        { kind: 'echo', layers: [{ source: 'test', values: [['NAME', 'echo'], ...hive] }] },
        {
          kind: 'gateway',
          layers: [
            {
              source: 'test',
              values: [
                ['NAME', 'gw'],
                ['Port', '0'],
                ['Strict', 'true'],
                ['OUTPUTCHANNEL', 'echo'],
                ['RateLimits', `echo=${LIMIT}/s`],
                ...hive,
              ],
            },
          ],
        },
      ],
    });
    nodes.push(node);
    const running = node.services.find((s) => s.kind === 'gateway')!.running;
    return {
      node,
      url: `http://127.0.0.1:${running.status().port as number}/echo/load`,
      status: () => running.status() as Record<string, number>,
    };
  }

  const wrk = async (url: string, seconds: number): Promise<{ total: number; refused: number; seconds: number }> => {
    const { stdout } = await run('wrk', ['-t1', '-c4', `-d${seconds}s`, '--timeout', '2s', '-s', script, url], {
      timeout: 30_000,
    });
    const m = /(\d+) requests in ([\d.]+)s/.exec(stdout);
    return {
      total: Number(m?.[1]),
      seconds: Number(m?.[2]),
      refused: Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0),
    };
  };

  it('two gateways loaded at once admit the limit together, within 10 %', async () => {
    const [a, b] = [await gateway('node-a'), await gateway('node-b')];
    await until(() => (a.status().rateSyncs ?? 0) > 2 && (b.status().rateSyncs ?? 0) > 2, 10_000);
    // the warm-up spends both initial bursts and the debts they leave
    await Promise.all([wrk(a.url, 2), wrk(b.url, 2)]);
    const [ra, rb] = await Promise.all([wrk(a.url, 5), wrk(b.url, 5)]);
    const admitted = ra.total - ra.refused + (rb.total - rb.refused);
    const seconds = Math.max(ra.seconds, rb.seconds);
    const rate = admitted / seconds;
    expect(ra.refused + rb.refused, 'the load is over the limit').to.be.greaterThan(admitted);
    expect(Math.min(ra.total - ra.refused, rb.total - rb.refused), 'each gateway admitted some').to.be.greaterThan(0);
    expect(rate, `admitted ${ra.total - ra.refused} + ${rb.total - rb.refused} in ${seconds} s`).to.be.within(
      LIMIT * 0.9,
      LIMIT * 1.1,
    );
  });

  it('a load on one gateway alone gets the whole limit', async () => {
    const [a, b] = [await gateway('node-a'), await gateway('node-b')];
    await until(() => (a.status().rateSyncs ?? 0) > 2 && (b.status().rateSyncs ?? 0) > 2, 10_000);
    await wrk(a.url, 2);
    const r = await wrk(a.url, 4);
    const rate = (r.total - r.refused) / r.seconds;
    expect(rate, `admitted ${r.total - r.refused} in ${r.seconds} s`).to.be.within(LIMIT * 0.9, LIMIT * 1.1);
  });
});
