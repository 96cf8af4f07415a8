/**
 * The power-cut filesystem of the tests (spec/support/lazyfs.py, Jepsen's LazyFS idea): data written but
 * not fsynced lives in the FUSE process's memory; `crash()` SIGKILLs that process (the "power cut": the
 * unsynced data is gone), detaches the mount and mounts again over the same backing directory, which
 * holds exactly what was fsynced. Shared by every test that cuts power under a store (queue SQLite store,
 * nats-server file stores). Needs /dev/fuse, root (or fuse rights) and Debian's python3-fusepy
 * (scripts/servers.sh installs it); `lazyFsMissing()` says why not when one is missing.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sleep } from './wait.js';

const SCRIPT = new URL('./lazyfs.py', import.meta.url).pathname;
/** Debian's interpreter: python3-fusepy is installed for it, not for a python3 earlier on PATH. */
const PYTHON = '/usr/bin/python3';

export interface LazyFs {
  /** Where the store goes (the FUSE mount). */
  readonly mountpoint: string;
  /** The directory holding what survived (fsynced data). */
  readonly backing: string;
  /** Power cut: every unsynced write is dropped; resolves once mounted again. */
  crash(): Promise<void>;
  /** Detaches the mount and stops the FUSE process (idempotent; safe after a failure). */
  unmount(): void;
}

/** Why the filesystem cannot run here, or undefined when it can. */
export function lazyFsMissing(): string | undefined {
  if (!existsSync('/dev/fuse')) return 'no /dev/fuse on this machine';
  if (!existsSync(PYTHON) || spawnSync(PYTHON, ['-c', 'import fusepy']).status !== 0)
    return 'python3-fusepy is not installed (bash scripts/servers.sh installs it)';
  if (spawnSync('which', ['fusermount']).status !== 0) return 'fusermount is not installed (Debian package fuse3)';
  return undefined;
}

function mounted(mountpoint: string): boolean {
  return readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[1] === mountpoint);
}

function detach(mountpoint: string): void {
  if (!mounted(mountpoint)) return;
  if (spawnSync('fusermount', ['-u', '-z', mountpoint]).status !== 0) spawnSync('umount', ['-l', mountpoint]);
}

async function start(backing: string, mountpoint: string): Promise<ChildProcess> {
  let err = '';
  const child = spawn(PYTHON, [SCRIPT, backing, mountpoint], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  for (let waited = 0; waited < 10_000; waited += 20) {
    if (mounted(mountpoint)) return child;
    if (child.exitCode !== null) break;
    await sleep(20);
  }
  child.kill('SIGKILL');
  throw new Error(`lazyfs did not mount ${mountpoint}: ${err.trim()}`);
}

async function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

/** Mounts the filesystem at `<dir>/mnt` over `<dir>/backing`. */
export async function mountLazyFs(dir: string): Promise<LazyFs> {
  const backing = join(dir, 'backing');
  const mountpoint = join(dir, 'mnt');
  mkdirSync(backing, { recursive: true });
  mkdirSync(mountpoint, { recursive: true });
  let child = await start(backing, mountpoint);
  return {
    mountpoint,
    backing,
    async crash() {
      await killed(child);
      detach(mountpoint);
      child = await start(backing, mountpoint);
    },
    unmount() {
      detach(mountpoint);
      child.kill('SIGKILL');
    },
  };
}
