import { expect } from 'chai';
import type { Revised, SharedBucket } from '../../../actors/hive/transport.js';
import type { Logger } from '../../../actors/observe/logger.js';
import { RateLimiter, parseRateLimits } from '../../../actors/gateway/rate-limits.js';
import { RateSync } from '../../../actors/gateway/rate-sync.js';

/** JetStream KV's compare-and-set rules in memory; `off` makes it unreachable. */
function casBucket(): { bucket: SharedBucket; off: (v: boolean) => void; writes: () => number } {
  const values = new Map<string, Revised>();
  let revision = 0;
  let off = false;
  let writes = 0;
  const reach = <T>(f: () => T): Promise<T> => (off ? Promise.reject(new Error('unreachable')) : Promise.resolve(f()));
  return {
    off: (v) => (off = v),
    writes: () => writes,
    bucket: {
      get: (k) => reach(() => values.get(k)),
      create: (k, v) =>
        reach(() => {
          if (values.has(k)) return undefined;
          writes++;
          values.set(k, { value: v, revision: ++revision });
          return revision;
        }),
      update: (k, v, r) =>
        reach(() => {
          if (values.get(k)?.revision !== r) return undefined;
          writes++;
          values.set(k, { value: v, revision: ++revision });
          return revision;
        }),
      remove: (k, r) => reach(() => void (values.get(k)?.revision === r && values.delete(k))),
    },
  };
}

const lines: string[] = [];
const log = {
  info: (m: string) => lines.push(`info ${m}`),
  warn: (m: string) => lines.push(`warn ${m}`),
  error: (m: string) => lines.push(`error ${m}`),
  debug: () => undefined,
} as unknown as Logger;

/** Takes tokens on route echo/x until one is refused or `n` were asked; how many were admitted. */
function admit(limiter: RateLimiter, n: number, now: number): number {
  let admitted = 0;
  for (let i = 0; i < n; i++) if (limiter.take('echo', 'x', undefined, '', now)?.allowed) admitted++;
  return admitted;
}

describe('rate limits shared through the hive (RateSync)', () => {
  it('each gateway charges its buckets with what the others took: together they admit the limit, not the limit each', async () => {
    const { bucket } = casBucket();
    const table = parseRateLimits('echo=10/s');
    const a = new RateLimiter(table, true);
    const b = new RateLimiter(table, true);
    const sa = new RateSync(a, bucket, 'gw', log);
    const sb = new RateSync(b, bucket, 'gw', log);
    let t = 1_000_000;
    await sa.round(t);
    await sb.round(t);
    let admitted = 0;
    // 20 s of both gateways loaded far over the limit, a sharing round every 50 ms
    for (let step = 0; step < 400; step++) {
      t += 50;
      admitted += admit(a, 5, t) + admit(b, 5, t);
      await sa.round(t);
      await sb.round(t);
    }
    // 10/s for 20 s plus both initial bursts (10 each); without sharing it would be 2 × (200 + 10)
    expect(admitted).to.be.within(200, 200 + 20 + 2);
    expect(sa.rounds).to.equal(401);
  });

  it('a round charges nothing twice: a lost compare-and-set is retried without charging again', async () => {
    const { bucket } = casBucket();
    const table = parseRateLimits('echo=10/m');
    const a = new RateLimiter(table, true);
    const b = new RateLimiter(table, true);
    const sa = new RateSync(a, bucket, 'gw', log);
    const sb = new RateSync(b, bucket, 'gw', log);
    const t = 5_000_000;
    await sb.round(t);
    expect(admit(a, 4, t)).to.equal(4);
    await sa.round(t);
    await sb.round(t);
    await sb.round(t);
    // b heard of a's 4 once: 6 of its 10 are left
    expect(admit(b, 10, t)).to.equal(6);
  });

  it('a gateway that starts later is not charged with what the others took before it', async () => {
    const { bucket } = casBucket();
    const table = parseRateLimits('echo=10/m');
    const a = new RateLimiter(table, true);
    const sa = new RateSync(a, bucket, 'gw', log);
    const t = 7_000_000;
    expect(admit(a, 8, t)).to.equal(8);
    await sa.round(t);
    const b = new RateLimiter(table, true);
    const sb = new RateSync(b, bucket, 'gw', log);
    await sb.round(t);
    expect(admit(b, 10, t)).to.equal(10);
  });

  it('cut off from the hive: counts on its own, says so once, and again when it is back', async () => {
    const { bucket, off } = casBucket();
    lines.length = 0;
    const a = new RateLimiter(parseRateLimits('echo=10/s'), true);
    const sa = new RateSync(a, bucket, 'gw', log);
    off(true);
    await sa.round(1);
    await sa.round(2);
    off(false);
    await sa.round(3);
    expect(lines.filter((l) => l.startsWith('warn'))).to.have.length(1);
    expect(lines[0]).to.match(
      /^warn rate limits: sharing through the hive failed \(unreachable\); this gateway counts on its own until it is back$/,
    );
    expect(lines[1]).to.equal('info rate limits are shared through the hive again');
  });

  it('a gateway not heard from for 10 s is dropped from the key', async () => {
    const { bucket } = casBucket();
    const table = parseRateLimits('echo=10/s');
    const sa = new RateSync(new RateLimiter(table, true), bucket, 'gw', log);
    const sb = new RateSync(new RateLimiter(table, true), bucket, 'gw', log);
    await sa.round(0);
    await sb.round(0);
    for (let t = 1_000; t <= 12_000; t += 1_000) await sa.round(t);
    const doc = JSON.parse((await bucket.get('gateway.gw'))!.value) as Record<string, unknown>;
    expect(Object.keys(doc)).to.have.length(1);
  });
});
