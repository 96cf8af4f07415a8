/**
 * Three hosts of a netns lab (spec/support/netns.ts), each running a nats-server of one JetStream cluster
 * and a node process: a gateway on the host's address (RequestTimeout 30s, idempotency keys allowed), the
 * queue `jq` on JetStream (Replicas 3: one holder, two standing by) and a recording echo `work` as the
 * queue's target. The partition and pause tests cut off or freeze one host of it and read what the nodes
 * logged, what the workers recorded and who wrote the queue's stream.
 */
import { join } from 'node:path';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { recorded } from '../integration/queue/helpers.js';
import type { NatsCluster } from '../adapters/nats/cluster.js';
import type { NetnsLab } from '../support/netns.js';
import { netnsLab } from '../support/netns.js';
import { natsServer210, netnsNatsCluster, netnsNatsUnavailable } from '../support/netns-nats.js';
import { tempDir } from '../temp.js';
import type { NodeProcess } from './node-process.js';
import { GATEWAY_READY, clusterHive, startNodeProcess, writeNodeFile } from './node-process.js';
import { sleep } from '../support/wait.js';
import { type Skip, requireInstalled } from '../support/installed.js';

export const QUEUE = 'jq';
const HOLDING = 'active queue holder now';
const STOPPED = 'stops serving';
/** The line the store logs when a write of its finds another node's record in the stream (jetstream-store.ts). */
const FENCED = "the queue's log was written by another node";

export interface NetnsHive {
  readonly lab: NetnsLab;
  readonly cluster: NatsCluster;
  readonly nodes: readonly NodeProcess[];
  /** The enqueue address of host i's gateway. */
  gateway(i: number): string;
  /** Whether host i's node serves the queue now, as its log says (its last holding line not followed by a step-down). */
  serving(i: number): boolean;
  /** How many times host i's node took the queue. */
  holdings(i: number): number;
  /** How many of host i's writes the stream refused since `from` characters of its output (the fence). */
  fenced(i: number, from?: number): number;
  /** What the three workers recorded, one item per delivery. */
  delivered(): string[];
  stop(): Promise<void>;
}

/** Skips (or fails in CI) where network namespaces or nats-server are missing. */
export function requireNetns(skip: Skip): void {
  const why = netnsNatsUnavailable();
  requireInstalled(why === undefined, why ?? '', skip);
}

/** The nats-server 2.10 binary, or the test skipped (failed in CI) naming the script that provides it. */
export function requireNatsServer210(skip: Skip): string {
  const bin = natsServer210();
  requireInstalled(
    bin !== undefined,
    'nats-server 2.10 is not unpacked here: run bash scripts/nats-server-2.10.sh (make test and make chaos run it)',
    skip,
  );
  return bin!;
}

/**
 * Starts the hosts, their servers and their nodes. `env` goes to the nodes (a deliberately broken build);
 * `queue` adds parameters to the queue's line; `natsServer` is the servers' binary (Debian's by default).
 */
export async function startNetnsHive(
  opts: { env?: NodeJS.ProcessEnv; queue?: string; natsServer?: string } = {},
): Promise<NetnsHive> {
  const lab = netnsLab(['a', 'b', 'c']);
  const nodes: NodeProcess[] = [];
  let cluster: NatsCluster | undefined;
  const dir = tempDir('hn-netns-hive-');
  const stop = async (): Promise<void> => {
    await Promise.all(nodes.map((n) => n.kill('SIGKILL')));
    await cluster?.stop();
    await lab.destroy();
  };
  try {
    cluster = await netnsNatsCluster(lab, opts.natsServer);
    const files = lab.hosts.map((h, i) =>
      writeNodeFile(
        dir,
        `node-${h.name}`,
        [
          `{service: gateway, NAME: gw, Port: 8080, Strict: true, OUTPUTCHANNEL: ${QUEUE}, RequestTimeout: 30s, ControlAllowList: "idempotency-key,command"}`,
          `{service: queue, NAME: ${QUEUE}, Store: jetstream, Replicas: 3, AckWait: 5s, DeliveryConcurrency: 8, DefaultChannel: work, DefaultRequeueTime: 1${opts.queue ? `, ${opts.queue}` : ''}}`,
          `{service: echo, NAME: work, Delay: 50, RecordFile: "${join(dir, `work-${h.name}.jsonl`)}"}`,
        ],
        clusterHive(cluster!, i, dir),
      ),
    );
    for (const [i, file] of files.entries()) {
      const host = lab.hosts[i]!;
      // the cluster elects its JetStream leaders in its first seconds: a node may have to try again
      for (let attempt = 0; ; attempt++) {
        try {
          nodes.push(
            await startNodeProcess(file, {
              ready: GATEWAY_READY,
              env: opts.env,
              timeoutMs: 60_000,
              spawner: (c, a, o) => lab.spawn(host, c, a, o),
            }),
          );
          break;
        } catch (e) {
          if (attempt === 4) throw e;
          await sleep(2_000);
        }
      }
    }
  } catch (e) {
    await stop();
    throw e;
  }
  const count = (text: string, line: string): number => text.split(line).length - 1;
  const hive: NetnsHive = {
    lab,
    cluster,
    nodes,
    gateway: (i) => `http://${lab.hosts[i]!.address}:8080/${QUEUE}/action`,
    serving: (i) => {
      const n = nodes[i]!;
      return (
        n.child.exitCode === null &&
        n.child.signalCode === null &&
        n.output().lastIndexOf(HOLDING) > n.output().lastIndexOf(STOPPED)
      );
    },
    holdings: (i) => count(nodes[i]!.output(), HOLDING),
    fenced: (i, from = 0) => count(nodes[i]!.output().slice(from), FENCED),
    delivered: () =>
      lab.hosts.flatMap((h) =>
        recorded(join(dir, `work-${h.name}.jsonl`)).map((r) => String(r.message.Data.item?.[0])),
      ),
    stop,
  };
  return hive;
}

/** Waits until a node other than `not` takes the queue after the holdings counted in `before`: which one. */
export async function awaitTakeover(
  hive: NetnsHive,
  not: number,
  before: readonly number[],
  ms = 90_000,
): Promise<number> {
  const until = Date.now() + ms;
  for (;;) {
    const taker = hive.nodes.findIndex((_, i) => i !== not && hive.holdings(i) > before[i]!);
    if (taker >= 0) return taker;
    if (Date.now() > until) {
      const lease = await leaseHolder(hive).catch((e: unknown) => `unreadable (${(e as Error).message})`);
      throw new Error(
        `no other node took the queue over within ${ms} ms (the lease names node ${lease}; serving by their logs: ${hive.nodes.map((_, i) => hive.serving(i)).join(', ')})`,
      );
    }
    await sleep(20);
  }
}

/** The node the queue's lease names (its value begins host:pid:…, actors/hive/lease.ts), or -1. */
async function leaseHolder(hive: NetnsHive): Promise<number> {
  const nc = await connect({
    servers: hive.cluster.servers.map((s) => s.url),
    token: hive.cluster.token,
    timeout: 2_000,
  });
  try {
    const kv = await new Kvm(nc).open('hivenode_queues');
    const value = (await kv.get(`holder.${QUEUE}`))?.string() ?? '';
    const pid = Number(value.split('\n')[0]!.split(':')[1]);
    return hive.nodes.findIndex((n) => n.child.pid === pid);
  } finally {
    await nc.close();
  }
}

/**
 * Waits until one node holds the queue — the lease names it and it serves — and returns which. A node
 * that lost the queue while cut off may not have logged its step-down yet: its log alone could name two.
 */
export async function awaitHolder(hive: NetnsHive, ms = 60_000): Promise<number> {
  const until = Date.now() + ms;
  for (;;) {
    const h = await leaseHolder(hive).catch(() => -1);
    const serving = hive.nodes.map((_, i) => hive.serving(i));
    if (h >= 0 && serving.every((yes, i) => yes === (i === h))) return h;
    if (Date.now() > until) throw new Error(`no node held the queue within ${ms} ms`);
    await sleep(200);
  }
}

/** A `via` for steadyEnqueues: the hosts' gateways in turn, leaving out the host `avoid()` names and any host cut off. */
export function otherGateways(hive: NetnsHive, avoid: () => number): () => string {
  let next = 0;
  return () => {
    const reachable = [0, 1, 2].filter((i) => i !== avoid() && !hive.lab.hosts[i]!.cut());
    return hive.gateway(reachable[next++ % reachable.length]!);
  };
}
