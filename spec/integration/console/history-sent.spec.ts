/** The rate of an arrow from the sampled sent counts (history.ts sentRate): this node's counters and another node's roster entries. */
import { expect } from 'chai';
import { LiveHistory, REQUESTS_FIGURE } from '../../../node/console/history.js';
import type { ConsoleSources } from '../../../node/console/sources.js';
import type { RosterEntry } from '../../../node/hive-roster.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');

/** Sources with one local queue 'q' whose sent count on 'target' is `local.n`, and a remote node 'b' whose entry is `remote`. */
function sources(local: { n: number | undefined }, remote: { entry: RosterEntry | undefined }): ConsoleSources {
  return {
    services: () => [
      { kind: 'queue', name: 'q', channel: 'q', config: { DefaultChannel: 'target' }, status: () => ({}) },
    ],
    sent: () => new Map(local.n === undefined ? [] : [['target', { n: local.n }]]),
    nodes: () => (remote.entry ? [remote.entry] : []),
    actorTotals: () => [],
    metrics: { requestCounts: () => [] },
  } as unknown as ConsoleSources;
}

const entry = (seenAt: number, sent: number): RosterEntry => ({
  name: 'b',
  host: 'h',
  pid: 1,
  startedAt: '',
  seenAt: new Date(seenAt).toISOString(),
  services: [{ name: 'r', kind: 'queue', channel: 'r', sends: [{ channel: 'target', label: 'delivers', sent }] }],
});

describe("console history: each arrow's rate from what its sender sent", () => {
  it('this node: a channel never sent on is 0/s, then the count over about the last 10 s', () => {
    const local = { n: undefined as number | undefined };
    const h = new LiveHistory(sources(local, { entry: undefined }));
    const q = { node: '', service: 'q', channel: 'target', label: 'delivers' };
    h.sample(T0);
    expect(h.sentRate(q), 'one sample: no interval yet').to.equal(undefined);
    h.sample(T0 + 2000);
    expect(h.sentRate(q)).to.equal(0);
    local.n = 10;
    h.sample(T0 + 4000);
    expect(h.sentRate(q)).to.equal(10 / 4);
    // 30 s later at 5 a second: only the last 10 s (and half an interval) count
    for (let t = 6000; t <= 34_000; t += 2000) {
      local.n += 10;
      h.sample(T0 + t);
    }
    expect(h.sentRate(q)).to.equal(5);
  });

  it('another node: undefined until two of its entries were read, then their difference over the time between them', () => {
    const remote = { entry: entry(T0, 5) as RosterEntry | undefined };
    const h = new LiveHistory(sources({ n: undefined }, remote));
    const r = { node: 'b@h#1', service: 'r', channel: 'target', label: 'delivers' };
    h.sample(T0 + 1000);
    h.sample(T0 + 3000);
    expect(h.sentRate(r), 'the same entry read twice').to.equal(undefined);
    remote.entry = entry(T0 + 5000, 25);
    h.sample(T0 + 5000);
    expect(h.sentRate(r)).to.equal(4);
    expect(h.sentRate({ ...r, service: 'other' })).to.equal(undefined);
    // a node gone from the roster has no rate
    remote.entry = undefined;
    h.sample(T0 + 7000);
    expect(h.sentRate(r)).to.equal(undefined);
  });
});

describe('console history: an arrow its service counts itself', () => {
  /** One service of this kind and wiring whose hive count per channel is `sent` and whose status is `status`. */
  const one = (
    kind: string,
    config: Record<string, unknown>,
    sent: Map<string, { n: number }>,
    status: Record<string, unknown>,
  ): LiveHistory =>
    new LiveHistory({
      services: () => [{ kind, name: 's', channel: 's', config, status: () => status }],
      sent: () => sent,
      nodes: () => [],
      actorTotals: () => [],
      metrics: { requestCounts: () => [] },
    } as unknown as ConsoleSources);

  it("a queue's dead letters: the entries that died, not each try of their hand-over", () => {
    const sent = new Map([
      ['dlq', { n: 0 }],
      ['target', { n: 0 }],
    ]);
    const status = { died: 0, states: {} };
    const h = one('queue', { DefaultChannel: 'target', DefaultDeadLetterSlap: 'dlq' }, sent, status);
    h.sample(T0);
    // 2 entries died; their hand-overs were refused and tried 20 times
    status.died = 2;
    sent.get('dlq')!.n = 20;
    sent.get('target')!.n = 8;
    h.sample(T0 + 2000);
    expect(h.sentRate({ node: '', service: 's', channel: 'dlq', label: 'dead letters' })).to.equal(1);
    expect(h.sentRate({ node: '', service: 's', channel: 'target', label: 'delivers' })).to.equal(4);
  });

  it("a gateway whose OUTPUTCHANNEL is also a route's channel: what no route matched on its own arrow, the rest on the route's", () => {
    const sent = new Map([['echo', { n: 0 }]]);
    const status = { accepted: 0, unrouted: 0 };
    const h = one('gateway', { Routes: 'echo=echo;sql/*=sql', OUTPUTCHANNEL: 'echo' }, sent, status);
    h.sample(T0);
    sent.get('echo')!.n = 10;
    status.unrouted = 4;
    h.sample(T0 + 2000);
    expect(h.sentRate({ node: '', service: 's', channel: 'echo', label: 'echo' })).to.equal(3);
    expect(h.sentRate({ node: '', service: 's', channel: 'echo', label: 'no route matched' })).to.equal(2);
    expect(h.sentRate({ node: '', service: 's', channel: 'sql', label: 'sql/*' })).to.equal(0);
  });
});

describe('console history: an arrow without a hive sender is counted by its service', () => {
  it("an SQL poller's polls (a nested status figure) and an HTTP client's handled requests, per second over the last 10 s", () => {
    const polls = { n: 0 };
    const handled = { count: 0 };
    const h = new LiveHistory({
      services: () => [
        {
          kind: 'sql',
          name: 'poll',
          channel: '',
          config: {},
          status: () => ({ mode: 'poll', poller: { polls: polls.n } }),
        },
        { kind: 'httpclient', name: 'web', channel: 'web', config: {}, status: () => ({}) },
      ],
      sent: () => new Map(),
      nodes: () => [],
      actorTotals: () => [],
      metrics: {
        requestCounts: () => [{ service: 'web', kind: 'httpclient', count: handled.count, errors: 0, buckets: [] }],
      },
    } as unknown as ConsoleSources);
    const pollFigure = { service: 'poll', figure: 'poller.polls' };
    const requests = { service: 'web', figure: REQUESTS_FIGURE };
    h.sample(T0);
    expect(h.countedRate(pollFigure), 'one sample: no interval yet').to.equal(undefined);
    polls.n = 4;
    handled.count = 20;
    h.sample(T0 + 2000);
    expect(h.countedRate(pollFigure)).to.equal(2);
    expect(h.countedRate(requests)).to.equal(10);
    expect(h.countedRate({ service: 'web', figure: 'accepted' }), 'a figure the service does not have').to.equal(
      undefined,
    );
  });
});
