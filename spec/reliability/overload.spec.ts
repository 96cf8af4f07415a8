/**
 * Overload: the gateway (its own process) in front of an echo that takes 50 ms per message is first
 * measured at a sustainable load (fewer connections than MaxInFlight), then flooded by wrk with far
 * more connections than it may admit — at least 10× the sustainable request rate. Expected: the excess
 * is answered 503 with Retry-After at once (MaxInFlight), RSS stays bounded, the health check stays
 * fast, and the sustainable throughput is back as soon as the flood stops.
 */
import { expect } from 'chai';
import { get } from 'node:http';
import { tempDir } from '../integration/queue/helpers.js';
import type { NodeProcess } from './node-process.js';
import { startNodeProcess, writeNodeFile } from './node-process.js';
import { reliabilityTest } from './record.js';
import { byScale } from './scale.js';
import { ensureWrk, ratePerSecond, runWrk } from './wrk.js';
import { sleep } from '../support/wait.js';
import { requireInstalled } from '../support/installed.js';

const FLOOD_SECONDS = byScale(5, 30);
const MAX_IN_FLIGHT = 32;
const STEADY_CONNECTIONS = 16;
const FLOOD_CONNECTIONS = 256;
const MIB = 2 ** 20;

/** Milliseconds a health check takes on a fresh connection (Infinity when it fails). */
function healthMs(port: number): Promise<number> {
  const began = performance.now();
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: '/healthcheck', agent: false, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200 ? performance.now() - began : Infinity));
    });
    req.on('error', () => resolve(Infinity));
    req.on('timeout', () => req.destroy());
  });
}

const percentile = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;
const round = (n: number): number => Math.round(n * 10) / 10;

describe('reliability: overload (gateway flooded through real sockets)', function () {
  let node: NodeProcess | undefined;
  after(async () => {
    await node?.kill();
  });

  reliabilityTest(
    `${FLOOD_SECONDS} s flood of ${FLOOD_CONNECTIONS} connections: 503 + Retry-After for the excess, bounded RSS, fast health check, throughput recovers`,
    {
      suite: 'overload',
      load: `wrk, ${FLOOD_CONNECTIONS} connections for ${FLOOD_SECONDS} s against a gateway with MaxInFlight ${MAX_IN_FLIGHT} before an echo with 50 ms Delay (sustainable load measured first with ${STEADY_CONNECTIONS} connections)`,
      faults: 'offered request rate ≥ 10× the measured sustainable rate',
    },
    byScale(90_000, 180_000),
    async (figures, skip) => {
      const missing = ensureWrk();
      requireInstalled(missing === undefined, missing ?? '', skip);
      const file = writeNodeFile(tempDir('hn-overload-'), 'node', [
        '{service: echo, NAME: echo, Delay: 50ms}',
        `{service: gateway, NAME: gw, Port: 0, Strict: true, OUTPUTCHANNEL: echo, MaxInFlight: ${MAX_IN_FLIGHT}}`,
      ]);
      node = await startNodeProcess(file);
      const url = `http://127.0.0.1:${node.port}/load/op`;
      const gateway = node;

      await runWrk(url, { connections: STEADY_CONNECTIONS, threads: 1, seconds: 1 }); // warm-up
      const before = await runWrk(url, { connections: STEADY_CONNECTIONS, threads: 1, seconds: 3 });
      const sustainable = ratePerSecond(before, 200);
      const rssBefore = gateway.rssBytes();
      const healthBefore = await healthMs(gateway.port);

      // during the flood: RSS and a health check every 50 ms, from this process. The checks are judged
      // from the flood's second second on: in its first, wrk opens its 256 connections at once, and a
      // health check's connection made in that storm may wait for the kernel's SYN retry (1 s, 3 s) —
      // which in the scaled 5 s flood decided its p95 alone (clean clones, 2026-11-27: 3.07 s, 4.6 s,
      // 3.6 s); every check, the storm's too, is in the figures
      const rss: number[] = [];
      const health: number[] = [];
      /** The checks begun after wrk's first second, when its 256 connections have been opened. */
      const settled: number[] = [];
      const floodBegan = performance.now();
      let flooding = true;
      const monitor = (async () => {
        while (flooding) {
          rss.push(gateway.rssBytes());
          const began = performance.now();
          const ms = await healthMs(gateway.port);
          health.push(ms);
          if (began - floodBegan >= 1_000) settled.push(ms);
          await sleep(50);
        }
      })();
      const flood = await runWrk(url, { connections: FLOOD_CONNECTIONS, threads: 2, seconds: FLOOD_SECONDS });
      flooding = false;
      await monitor;
      const after = await runWrk(url, { connections: STEADY_CONNECTIONS, threads: 1, seconds: 3 });

      const offered = ratePerSecond(flood);
      const refused = flood.statuses['503'] ?? 0;
      const peakRss = Math.max(...rss);
      const third = Math.max(1, Math.floor(rss.length / 3));
      const rssGrowth = Math.max(...rss.slice(-third)) - Math.max(...rss.slice(0, third));
      Object.assign(figures, {
        'sustainable rate (req/s)': Math.round(sustainable),
        'offered during the flood (req/s)': Math.round(offered),
        'offered / sustainable': round(offered / sustainable),
        'flood answers': Object.entries(flood.statuses)
          .map(([s, n]) => `${s}×${n}`)
          .join(' '),
        '503 without Retry-After': flood.noRetryAfter,
        'socket errors': flood.socketErrors,
        '200/s during the flood': Math.round(ratePerSecond(flood, 200)),
        'RSS before / peak (MiB)': `${round(rssBefore / MIB)} / ${round(peakRss / MIB)}`,
        'RSS growth first → last third of the flood (MiB)': round(rssGrowth / MIB),
        'health check before / median / p95 / max during (ms)': `${round(healthBefore)} / ${round(percentile(health, 50))} / ${round(percentile(health, 95))} / ${round(Math.max(...health))}`,
        'health check after the first second: checks / median / p95 (ms)': `${settled.length} / ${round(percentile(settled, 50))} / ${round(percentile(settled, 95))}`,
        'throughput after the flood (req/s)': Math.round(ratePerSecond(after, 200)),
      });

      expect(offered / sustainable, 'the flood offers at least 10× the sustainable rate').to.be.at.least(10);
      expect(refused, '503 answers').to.be.greaterThan(0);
      expect(flood.noRetryAfter, '503 answers without Retry-After').to.equal(0);
      expect(Object.keys(flood.statuses).sort(), 'only 200 and 503 answers').to.deep.equal(['200', '503']);
      expect(flood.socketErrors, 'connections refused, reset or timed out').to.equal(0);
      expect(ratePerSecond(flood, 200), 'admitted requests keep being served').to.be.greaterThan(sustainable * 0.5);
      expect(peakRss - rssBefore, 'RSS growth under the flood').to.be.below(150 * MIB);
      expect(rssGrowth, 'RSS keeps growing during the flood').to.be.below(50 * MIB);
      expect(health.every(Number.isFinite), 'every health check answered 200').to.equal(true);
      // the median is the steady answer; p95 allows for the 2 cores being shared with wrk and the test
      expect(percentile(settled, 50), 'median health check under the flood, after its first second (ms)').to.be.below(
        500,
      );
      expect(percentile(settled, 95), 'p95 health check under the flood, after its first second (ms)').to.be.below(
        3000,
      );
      expect(ratePerSecond(after, 200), 'throughput after the flood').to.be.at.least(sustainable * 0.8);
    },
  );
});
