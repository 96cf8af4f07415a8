/**
 * A private nats-server for the adapter tests: random port on 127.0.0.1, a token, JetStream in a temp
 * directory; stopped, restarted (same port and store) and killed by the tests themselves.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { freePort, waitForPort } from '../ports.js';
import { join } from 'node:path';
import { tempDir } from '../../temp.js';

export interface NatsServer {
  url: string;
  token: string;
  port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** True when the nats-server binary is installed (scripts/test.sh installs it). */
export function natsServerAvailable(): boolean {
  return spawnSync('nats-server', ['--version']).status === 0;
}

export async function natsServer(opts: { maxPayload?: number; jetstream?: boolean } = {}): Promise<NatsServer> {
  const port = await freePort();
  const token = `t-${Math.random().toString(36).slice(2)}`;
  const store = tempDir('hn-nats-');
  let child: ChildProcess | undefined;
  const server: NatsServer = {
    url: `nats://127.0.0.1:${port}`,
    token,
    port,
    async start() {
      const conf = join(store, 'nats.conf');
      writeFileSync(
        conf,
        [`listen: "127.0.0.1:${port}"`, `authorization { token: "${token}" }`, ...(opts.jetstream === false ? [] : [`jetstream { store_dir: "${join(store, 'js')}" }`]), ...(opts.maxPayload ? [`max_payload: ${opts.maxPayload}`] : [])].join('\n'),
      );
      child = spawn('nats-server', ['-c', conf], { stdio: 'ignore' });
      await waitForPort(port, 10_000, 'nats-server');
    },
    async stop() {
      const c = child;
      child = undefined;
      if (!c || c.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        c.once('exit', () => resolve());
        c.kill('SIGKILL');
      });
    },
  };
  await server.start();
  return server;
}
