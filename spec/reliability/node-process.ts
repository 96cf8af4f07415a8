/**
 * A hivenode running as its own process (`hivenode run <node file>`), for the tests that must kill
 * it (SIGKILL at a random point), measure its memory (RSS from /proc) or keep load generators off its
 * CPU. Started with tsx from the sources, so no build step is needed.
 */
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsCluster } from '../adapters/nats/cluster.js';
import { HIVENODE_ARGS } from '../support/hivenode-bin.js';

/** The line a node with a gateway prints once it serves; its number is the port. */
export const GATEWAY_READY = /serves HTTPS? on port (\d+)/;

export interface NodeProcess {
  readonly child: ChildProcess;
  /** The port of the first capture of the ready pattern (NaN when it has none). */
  readonly port: number;
  /** Everything the process printed so far. */
  output(): string;
  /** Resident set size in bytes (Linux /proc). */
  rssBytes(): number;
  /** Sends `signal` and resolves when the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts a command for startNodeProcess: the test's own spawn, or one inside a host of a netns lab (spec/support/netns.ts). */
export type Spawner = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

/** Starts `hivenode run <file>` and resolves once its output matches `ready` (the gateway line by default). */
export function startNodeProcess(
  file: string,
  opts: { ready?: RegExp; env?: NodeJS.ProcessEnv; timeoutMs?: number; spawner?: Spawner; args?: string[] } = {},
): Promise<NodeProcess> {
  const ready = opts.ready ?? GATEWAY_READY;
  const child = (opts.spawner ?? spawn)(process.execPath, [...HIVENODE_ARGS, 'run', file, ...(opts.args ?? [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...opts.env },
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const handle = (port: number): NodeProcess => ({
    child,
    port,
    output: () => out,
    rssBytes: () =>
      Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? NaN) * 1024,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => fail(new Error(`node did not start within ${opts.timeoutMs ?? 30_000} ms: ${out}`)),
      opts.timeoutMs ?? 30_000,
    );
    const poll = setInterval(() => {
      const m = ready.exec(out);
      if (m) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve(handle(Number(m[1])));
      } else if (child.exitCode !== null) fail(new Error(`node exited with ${child.exitCode}: ${out}`));
    }, 20);
    const fail = (e: Error): void => {
      clearInterval(poll);
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(e);
    };
  });
}

/** Runs `hivenode run <file>` expecting it to exit by itself (a refused start): its exit code and output. */
/**
 * Starts a node on a JetStream cluster that may just have lost a server: the cluster elects its
 * leaders for a few seconds, so a start gets up to five tries, 2 s apart.
 */
export async function startClusterNode(file: string, env: NodeJS.ProcessEnv = {}): Promise<NodeProcess> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await startNodeProcess(file, { ready: GATEWAY_READY, timeoutMs: 60_000, env });
    } catch (e) {
      if (attempt === 4) throw e;
      await new Promise((r) => setTimeout(r, 2_000));
    }
  }
}

export function runNodeToExit(
  file: string,
  timeoutMs = 30_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...HIVENODE_ARGS, 'run', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`node did not exit within ${timeoutMs} ms: ${stdout}${stderr}`));
    }, timeoutMs);
    // 'close' comes after the output is read to its end
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Writes `<dir>/<name>.yaml` with the given service entries (YAML flow maps) and optional hive line. */
export function writeNodeFile(dir: string, name: string, services: string[], hive?: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    [...(hive ? [`hive: ${hive}`] : []), 'services:', ...services.map((s) => `  - ${s}`), ''].join('\n'),
  );
  return file;
}

/**
 * The hive of node `i` on a NATS cluster (a flow map for writeNodeFile): its own server first, then the
 * others, with the cluster's token (written to `<dir>/token`).
 */
export function clusterHive(cluster: NatsCluster, i: number, dir: string): string {
  const token = join(dir, 'token');
  writeFileSync(token, `${cluster.token}\n`);
  const servers = [cluster.servers[i]!, ...cluster.servers.filter((_, j) => j !== i)];
  return `{SERVERHOST: "${servers.map((s) => s.url).join(',')}", SERVERAUTH: "file://${token}"}`;
}
