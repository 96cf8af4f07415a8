/**
 * A private three-server nats-server cluster for the adapter and reliability tests: loopback client
 * and route ports, JetStream on each server in a temp directory, one token; each server can be
 * killed and started again (same ports and store), as a lost machine's server would be. Resolves once
 * the cluster's JetStream makes a three-replica bucket (its meta leader is elected).
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { tempDir } from '../../temp.js';
import { freePort, waitForPort } from '../ports.js';
import { sleep } from '../../support/wait.js';

export interface ClusterServer {
  readonly name: string;
  readonly url: string;
  /** Started and running. */
  running(): boolean;
  start(): Promise<void>;
  /** SIGKILL: the server's machine is gone. */
  kill(): Promise<void>;
}

export interface NatsCluster {
  readonly servers: readonly ClusterServer[];
  readonly token: string;
  /** Every server's URL, comma-separated (a SERVERHOST). */
  readonly urls: string;
  stop(): Promise<void>;
}

export interface NatsClusterOptions {
  /** Where a server keeps its JetStream store (default: under the cluster's temp directory); a power-cut test puts each on a filesystem of its own. */
  storeDir?: (name: string) => string;
}

export async function natsCluster(size = 3, opts: NatsClusterOptions = {}): Promise<NatsCluster> {
  const token = `t-${Math.random().toString(36).slice(2)}`;
  const dir = tempDir('hn-nats-cluster-');
  const ports = await Promise.all(
    Array.from({ length: size }, async () => ({ client: await freePort(), route: await freePort() })),
  );
  const servers = ports.map((p, i): ClusterServer => {
    const name = `n${i + 1}`;
    const conf = join(dir, `${name}.conf`);
    writeFileSync(
      conf,
      [
        `server_name: ${name}`,
        `listen: "127.0.0.1:${p.client}"`,
        `authorization { token: "${token}" }`,
        `jetstream { store_dir: "${opts.storeDir?.(name) ?? join(dir, name)}" }`,
        `cluster { name: hivenode-test, listen: "127.0.0.1:${p.route}", routes: [${ports.map((q) => `"nats-route://127.0.0.1:${q.route}"`).join(', ')}] }`,
      ].join('\n'),
    );
    return serverProcess(
      name,
      `nats://127.0.0.1:${p.client}`,
      () => spawn('nats-server', ['-c', conf], { stdio: 'ignore' }),
      (child) => waitForPort(p.client, 10_000, `nats-server ${name}`, child),
    );
  });
  return startCluster(servers, token);
}

/** A server of a cluster: `launch` starts its process, `listening` resolves once it accepts clients. */
export function serverProcess(
  name: string,
  url: string,
  launch: () => ChildProcess,
  listening: (child: ChildProcess) => Promise<void>,
): ClusterServer {
  let child: ChildProcess | undefined;
  return {
    name,
    url,
    running: () => child !== undefined && child.exitCode === null && child.signalCode === null,
    async start() {
      child = launch();
      await listening(child);
    },
    async kill() {
      const c = child;
      child = undefined;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        c.once('exit', () => resolve());
        c.kill('SIGKILL');
      });
    },
  };
}

/** Starts every server and resolves once their JetStream is ready (within `readyMs`); stops them all when that fails. */
export async function startCluster(servers: ClusterServer[], token: string, readyMs = 30_000): Promise<NatsCluster> {
  const cluster: NatsCluster = {
    servers,
    token,
    urls: servers.map((s) => s.url).join(','),
    async stop() {
      await Promise.all(servers.map((s) => s.kill()));
    },
  };
  try {
    await Promise.all(servers.map((s) => s.start()));
    await jetStreamReady(cluster, readyMs);
  } catch (e) {
    await cluster.stop();
    throw e;
  }
  return cluster;
}

/** Waits until the cluster makes (and so can replicate) a three-replica bucket. */
async function jetStreamReady(cluster: NatsCluster, ms = 30_000): Promise<void> {
  const nc = await connect({ servers: cluster.servers.map((s) => s.url), token: cluster.token });
  const until = Date.now() + ms;
  try {
    for (;;) {
      try {
        await new Kvm(nc).create('cluster-ready', { replicas: Math.min(3, cluster.servers.length) });
        return;
      } catch (e) {
        if (Date.now() > until)
          throw new Error(`the nats-server cluster's JetStream was not ready within ${ms} ms: ${(e as Error).message}`);
        await sleep(250);
      }
    }
  } finally {
    await nc.close();
  }
}
