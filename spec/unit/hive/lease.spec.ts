import { expect } from 'chai';
import type { Revised, SharedBucket } from '../../../actors/hive/transport.js';
import { Lease } from '../../../actors/hive/lease.js';
import type { Logger } from '../../../actors/observe/logger.js';
import { sleep } from '../../support/wait.js';

/** A bucket with JetStream KV's compare-and-set rules, in memory: one revision counter for the bucket. */
class CasBucket {
  private readonly values = new Map<string, Revised>();
  private revision = 0;
  /** Told of removals, as the NATS bucket tells them (onRemoved). */
  readonly removed = new Set<(key: string) => void>();
  get(key: string): Revised | undefined {
    return this.values.get(key);
  }
  create(key: string, value: string): number | undefined {
    if (this.values.has(key)) return undefined;
    this.values.set(key, { value, revision: ++this.revision });
    return this.revision;
  }
  update(key: string, value: string, revision: number): number | undefined {
    if (this.values.get(key)?.revision !== revision) return undefined;
    this.values.set(key, { value, revision: ++this.revision });
    return this.revision;
  }
  remove(key: string, revision: number): void {
    if (this.values.get(key)?.revision !== revision) return;
    this.values.delete(key);
    for (const l of this.removed) l(key);
  }
}

/** One poller's view of the bucket, which a test can cut off (a network partition, a stalled node). */
function view(bucket: CasBucket, toldOfRemovals = false): { bucket: SharedBucket; cut: (off: boolean) => void } {
  let off = false;
  const reach = <T>(f: () => T): Promise<T> => (off ? Promise.reject(new Error('unreachable')) : Promise.resolve(f()));
  return {
    cut: (v) => (off = v),
    bucket: {
      get: (k) => reach(() => bucket.get(k)),
      create: (k, v) => reach(() => bucket.create(k, v)),
      update: (k, v, r) => reach(() => bucket.update(k, v, r)),
      remove: (k, r) => reach(() => bucket.remove(k, r)),
      ...(toldOfRemovals
        ? {
            onRemoved: (key: string, listener: () => void) => {
              const l = (k: string): void => {
                if (k === key && !off) listener();
              };
              bucket.removed.add(l);
              return () => bucket.removed.delete(l);
            },
          }
        : {}),
    },
  };
}

function logger(lines: string[]): Logger {
  const l: Logger = {
    trace() {},
    debug() {},
    info: (m) => lines.push(m),
    warn: (m) => lines.push(m),
    error: (m) => lines.push(m),
    child: () => l,
  };
  return l;
}

const TTL = 600;

describe('Lease (one active poller per NAME)', () => {
  const leases: Lease[] = [];
  afterEach(async () => {
    await Promise.all(leases.splice(0).map((l) => l.stop()));
  });
  const lease = (b: SharedBucket, lines: string[] = [], role?: ConstructorParameters<typeof Lease>[4]): Lease => {
    const l = new Lease(b, 'lease.events', TTL, logger(lines), role);
    leases.push(l);
    return l;
  };

  it('the first poller takes the free lease; the next stands by', async () => {
    const bucket = new CasBucket();
    const a = lease(view(bucket).bucket);
    const b = lease(view(bucket).bucket);
    await a.start();
    await b.start();
    expect(a.holds()).to.equal(true);
    expect(b.holds()).to.equal(false);
    await sleep(2 * TTL);
    // renewed all along: still the same holder
    expect(a.holds()).to.equal(true);
    expect(b.holds()).to.equal(false);
    expect(bucket.get('lease.events')?.value).to.equal(a.holder);
  });

  it('a holder cut off stops holding within the lease; the other takes over within two lease periods, never both at once', async () => {
    const bucket = new CasBucket();
    const av = view(bucket);
    const aLines: string[] = [];
    const a = lease(av.bucket, aLines);
    const b = lease(view(bucket).bucket);
    await a.start();
    await b.start();
    av.cut(true);
    const cutAt = Date.now();
    let bothAtOnce = 0;
    let aStopped: number | undefined;
    let bTook: number | undefined;
    while (Date.now() - cutAt < 3 * TTL && bTook === undefined) {
      if (a.holds() && b.holds()) bothAtOnce++;
      if (!a.holds()) aStopped ??= Date.now() - cutAt;
      if (b.holds()) bTook = Date.now() - cutAt;
      await sleep(5);
    }
    expect(bothAtOnce).to.equal(0);
    expect(aStopped).to.be.at.most(TTL + 150);
    expect(bTook).to.be.a('number');
    expect(bTook!).to.be.below(2 * TTL);
    // the old holder gave the lease up itself once it ran out (it did not wait to hear it was taken); back again, it stays a follower
    av.cut(false);
    await sleep(TTL);
    expect(a.holds()).to.equal(false);
    expect(b.holds()).to.equal(true);
    expect(aLines.join('\n')).to.match(/no longer the active poller: its lease ran out: not renewed for \d+ ms/);
  });

  it('a holder that stops gives the lease up at once', async () => {
    const bucket = new CasBucket();
    const a = new Lease(view(bucket).bucket, 'lease.events', TTL, logger([]));
    const b = lease(view(bucket).bucket);
    await a.start();
    await b.start();
    await a.stop();
    expect(bucket.get('lease.events')).to.equal(undefined);
    const stoppedAt = Date.now();
    while (!b.holds() && Date.now() - stoppedAt < TTL) await sleep(5);
    expect(b.holds()).to.equal(true);
    // at the follower's next look (a third of the lease), not after a lease period of silence
    expect(Date.now() - stoppedAt).to.be.below(TTL / 3 + 150);
  });

  it('a holder that stops hands over at once where the bucket tells of removals', async () => {
    const bucket = new CasBucket();
    const a = new Lease(view(bucket, true).bucket, 'lease.events', TTL, logger([]));
    const b = lease(view(bucket, true).bucket);
    await a.start();
    await b.start();
    await sleep(TTL / 3 + 20); // just after b's poll: without the removal told, it would wait a third of a lease
    await a.stop();
    const stoppedAt = Date.now();
    while (!b.holds() && Date.now() - stoppedAt < TTL) await sleep(2);
    expect(b.holds()).to.equal(true);
    expect(Date.now() - stoppedAt).to.be.below(50);
  });

  it('tells every follower when a holder that stopped renewing was replaced, with a time before which only it had what was sent', async () => {
    const bucket = new CasBucket();
    const av = view(bucket);
    const dead: Array<{ who: string; before: number; at: number }> = [];
    const role = (who: string): ConstructorParameters<typeof Lease>[4] => ({
      name: 'queue holder',
      onHolderDead: (before) => dead.push({ who, before, at: Date.now() }),
    });
    const a = lease(av.bucket, [], role('a'));
    await a.start();
    const b = lease(view(bucket).bucket, [], role('b'));
    const c = lease(view(bucket).bucket, [], role('c'));
    await b.start();
    await c.start();
    await sleep(TTL / 2);
    const diedAt = Date.now();
    av.cut(true); // a is gone, as SIGKILLed
    const until = Date.now() + 4 * TTL;
    while (dead.length < 2 && Date.now() < until) await sleep(5);
    const taker = b.holds() ? 'b' : 'c';
    expect(dead.map((d) => d.who).sort(), 'the node that took over and the other follower').to.deep.equal(['b', 'c']);
    const took = dead.find((d) => d.who === taker)!;
    for (const d of dead) {
      // after a stopped (what went to it before then waits in vain), before the next holder held anything
      expect(d.before).to.be.above(diedAt);
      expect(d.before).to.be.below(took.at);
    }
    // a holder giving the lease up is no death: nobody is told
    dead.length = 0;
    await (taker === 'b' ? b : c).stop();
    await sleep(TTL);
    expect(dead).to.deep.equal([]);
  });
});
