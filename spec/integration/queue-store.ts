/**
 * The queue suite and the flow suite run against both stores: with HIVENODE_QUEUE_STORE=jetstream
 * every node a test starts with a persistent queue or flow runs on a NATS hive instead, with Store
 * jetstream (a flow's runs live where a queue's entries live: README, Flows).
 * Each PersistPath a test gives stands for one JetStream server of its own (its store under that
 * path), kept running while the test process runs, so a node started again on the same PersistPath
 * finds its entries as it would in the SQLite file, and a new PersistPath starts empty.
 * Tests of what only the SQLite file has (its format, its lock, a corrupt file) skip themselves.
 */
import { after, it } from 'mocha';
import type { NatsServer } from '../adapters/nats/server.js';
import { natsServer } from '../adapters/nats/server.js';
import { until } from '../support/wait.js';

export const QUEUE_STORE = process.env.HIVENODE_QUEUE_STORE === 'jetstream' ? 'jetstream' : 'sqlite';

/**
 * `it` for a rule of timing that the store takes no part in (a schedule's overlap rule: whether the
 * previous entry is still in flight is the queue's memory, not its store): it runs in the first pass
 * only, and shows as pending in the JetStream pass — the JetStream pass has the same schedules firing,
 * stored, surviving a restart and a SIGKILL in the tests that involve the store.
 */
export const storeAgnostic: Mocha.TestFunction | Mocha.PendingTestFunction = QUEUE_STORE === 'jetstream' ? it.skip : it;

/** Servers by PersistPath; the oldest are stopped beyond this many (a test uses one or two at a time). */
const KEEP = 4;
const servers = new Map<string, Promise<NatsServer>>();

after(async () => {
  const all = [...servers.values()];
  servers.clear();
  await Promise.all(all.map(async (s) => (await s).stop()));
});

/** The JetStream server standing for a PersistPath. */
export function serverFor(persistPath: string): Promise<NatsServer> {
  let s = servers.get(persistPath);
  if (!s) {
    s = natsServer({ auth: { kind: 'none' } });
    servers.set(persistPath, s);
    while (servers.size > KEEP) {
      const [oldest, server] = servers.entries().next().value as [string, Promise<NatsServer>];
      servers.delete(oldest);
      void server.then((x) => x.stop());
    }
  }
  return s;
}

type ServiceValues = Record<string, string | number | boolean> & { service: string };

/** A queue or flow with a store of its own that the test left to the default (SQLite). */
const persistent = (s: ServiceValues): boolean =>
  (s.service === 'queue' || s.service === 'flow') &&
  s.PersistPath !== '' &&
  s.PersistPath !== undefined &&
  s.Store === undefined;

/**
 * The services of a node as the store under test needs them: on JetStream, the node on the server of
 * its first persistent queue's or flow's PersistPath, and each of them with Store jetstream.
 */
export async function withQueueStore<T extends ServiceValues>(services: T[]): Promise<T[]> {
  if (QUEUE_STORE !== 'jetstream') return services;
  const first = services.find(persistent);
  if (!first) return services;
  const server = await serverFor(String(first.PersistPath));
  return services.map((s) => ({ ...s, SERVERHOST: server.url, ...(persistent(s) ? { Store: 'jetstream' } : {}) }));
}

/**
 * A node file's queue store and hive line for a PersistPath: as given on SQLite; on JetStream the
 * PersistPath's server as the hive and Store jetstream.
 */
export async function nodeFileStore(persistPath: string): Promise<{ store: string; hive?: string }> {
  if (QUEUE_STORE !== 'jetstream') return { store: `PersistPath: "${persistPath}"` };
  const server = await serverFor(persistPath);
  return { store: 'Store: jetstream', hive: `{SERVERHOST: "${server.url}"}` };
}

/**
 * On JetStream a node started again after a SIGKILL holds its queue (or flow) once the killed node's
 * lease ran out (actors/queue/queue-holder.ts): the tests wait for that, as they wait for a start.
 */
export async function untilHeld(status: () => Record<string, unknown>): Promise<void> {
  if (QUEUE_STORE !== 'jetstream' || !('holder' in status())) return;
  await until(() => status().holder === 'this node', {
    ms: 20_000,
    every: 50,
    what: () => `the queue or flow to be held: ${JSON.stringify(status())}`,
  });
}

/** Skips a test of what only the SQLite store has, when the suite runs on JetStream. */
export function sqliteOnly(ctx: Mocha.Context, why: string): void {
  if (QUEUE_STORE === 'jetstream') {
    ctx.test!.title += ` (SQLite store only: ${why})`;
    ctx.skip();
  }
}
