/**
 * A private redis-server (Debian package `redis-server`) for the BullMQ peer: its own temp directory,
 * a free port on 127.0.0.1, the append-only file on with the fsync policy asked for, no RDB
 * snapshots; never the system service the package registers. Stopped and deleted by `stop()`.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../spec/adapters/ports.js';

export interface Redis {
  port: number;
  /** 'redis 7.0.15, appendfsync always', for naming the peer in the figures. */
  name: string;
  stop(): Promise<void>;
}

export const redisInstalled = (): boolean => spawnSync('redis-server', ['--version']).status === 0;

const listening = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    sock.once('connect', () => resolve(sock.destroy() !== undefined));
    sock.once('error', () => resolve(false));
  });

export async function startRedis(appendfsync: 'always' | 'everysec'): Promise<Redis> {
  const dir = mkdtempSync(join(tmpdir(), 'hn-bench-redis-'));
  const port = await freePort();
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--appendonly',
    'yes',
    '--appendfsync',
    appendfsync,
    '--save',
    '',
    '--daemonize',
    'no',
    '--loglevel',
    'warning',
  ];
  const child: ChildProcess = spawn('redis-server', args, { stdio: 'ignore' });
  const deadline = Date.now() + 20_000;
  while (!(await listening(port))) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error('redis-server did not listen within 20 s');
    await new Promise((r) => setTimeout(r, 50));
  }
  const version = /v=([\d.]+)/.exec(spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).stdout)?.[1] ?? '?';
  const stop = async (): Promise<void> => {
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r).kill('SIGTERM'));
    rmSync(dir, { recursive: true, force: true });
  };
  return { port, name: `redis ${version}, appendfsync ${appendfsync}`, stop };
}
