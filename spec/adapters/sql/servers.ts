/**
 * Private PostgreSQL and MariaDB servers for the SQL adapter tests (and bench/sql.ts): a fresh data
 * directory under the OS temp directory, a free port on 127.0.0.1, a unix socket inside the temp
 * directory, a user with a password for TCP. Never the system services. Stopped (and restartable on
 * the same port and data) by the tests themselves; `remove()` deletes the directory.
 *
 * As root (CI), initdb refuses to run, so PostgreSQL runs as the `postgres` user of the Debian package;
 * MariaDB runs as root with `--user=root`. PostgreSQL runs with wal_level=logical and MariaDB with the
 * row-based binlog (log_bin, binlog_format=ROW; the user may read it), for the change-stream tests. `scripts/sql-servers.sh` installs the packages.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { freePort, waitForPort } from '../ports.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from '../../support/wait.js';
import { requireInstalled } from '../../support/installed.js';

export interface DbServer {
  readonly engine: 'postgres' | 'mariadb';
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly database: string;
  readonly dir: string;
  /** PostgreSQL's statement log (log_statement=all) when asked for; '' otherwise. */
  readonly logFile: string;
  start(): Promise<void>;
  /** Fast shutdown; resolves when the server process has exited. */
  stop(): Promise<void>;
  /** Stops and deletes the data directory. */
  remove(): Promise<void>;
}

const PG_BIN_ROOT = '/usr/lib/postgresql';

/** Servers still running: killed when the test process exits, so an aborted run leaves none behind. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of running) c.kill('SIGKILL');
});

function track(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/** The newest installed PostgreSQL bin directory, or undefined. */
export function postgresBin(): string | undefined {
  if (!existsSync(PG_BIN_ROOT)) return undefined;
  const versions = readdirSync(PG_BIN_ROOT)
    .filter((v) => existsSync(join(PG_BIN_ROOT, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(PG_BIN_ROOT, versions[0], 'bin');
}

function which(cmd: string): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/bin']) {
    if (dir && existsSync(join(dir, cmd))) return join(dir, cmd);
  }
  return undefined;
}

export function mariadbAvailable(): boolean {
  return which('mariadbd') !== undefined && which('mariadb-install-db') !== undefined;
}

/** Skips the suite when a server is missing, except in CI where scripts/sql-servers.sh should have installed it. */
export function requireServer(ctx: Mocha.Context, available: boolean, what: string): void {
  requireInstalled(available, `${what} is not installed (scripts/sql-servers.sh installs it)`, ctx);
}

export { freePort };

function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const hard = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(hard);
      resolve();
    });
    child.kill(signal);
  });
}

/** uid/gid of the postgres user when running as root (initdb refuses root). */
function postgresIds(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const r = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const g = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (r.status !== 0 || g.status !== 0)
    throw new Error('running as root needs the postgres user (Debian package postgresql)');
  return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

/**
 * PostgreSQL opens its port before it accepts sessions ("the database system is starting up"):
 * pg_isready answers 0 once it does.
 */
async function waitForPostgresReady(bin: string, port: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const probe = spawnSync(join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-t', '2'], {
      encoding: 'utf8',
    });
    if (probe.status === 0) return;
    if (Date.now() > until)
      throw new Error(
        `postgres on port ${port} did not accept connections within ${timeoutMs} ms: ${probe.stdout.trim()}`,
      );
    await sleep(50);
  }
}

export async function postgresServer(opts: { logStatements?: boolean } = {}): Promise<DbServer> {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL binaries not found under /usr/lib/postgresql');
  const ids = postgresIds();
  const dir = mkdtempSync(join(tmpdir(), 'hn-pg-'));
  if (ids) chownSync(dir, ids.uid, ids.gid);
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  const pwfile = join(dir, 'pw');
  writeFileSync(pwfile, password, { mode: 0o600 });
  if (ids) chownSync(pwfile, ids.uid, ids.gid);
  const data = join(dir, 'data');
  const init = spawnSync(
    join(bin, 'initdb'),
    [
      '-D',
      data,
      '-U',
      'hive',
      '--pwfile',
      pwfile,
      '--auth-local=trust',
      '--auth-host=scram-sha-256',
      '-E',
      'UTF8',
      '--no-sync',
      '--locale=C',
    ],
    {
      encoding: 'utf8',
      ...(ids ?? {}),
    },
  );
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  const logFile = opts.logStatements ? join(dir, 'statements.log') : '';
  let child: ChildProcess | undefined;
  const server: DbServer = {
    engine: 'postgres',
    port,
    user: 'hive',
    password,
    database: 'postgres',
    dir,
    logFile,
    async start() {
      const args = [
        '-D',
        data,
        '-p',
        String(port),
        '-k',
        dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'shared_buffers=16MB',
        '-c',
        'max_connections=60',
        '-c',
        'wal_level=logical',
      ];
      if (logFile)
        args.push('-c', 'log_statement=all', '-c', 'log_min_duration_statement=-1', '-c', 'log_line_prefix=');
      const out = logFile ? openSync(logFile, 'a') : 'ignore';
      child = track(spawn(join(bin, 'postgres'), args, { stdio: ['ignore', 'ignore', out], ...(ids ?? {}) }));
      if (typeof out === 'number') closeSync(out);
      await waitForPort(port, 20_000, 'postgres', child);
      await waitForPostgresReady(bin, port, 20_000);
    },
    stop: () => stopChild(child, 'SIGINT'),
    async remove() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

/** Runs SQL as MariaDB's root (over the server's socket): what the test user may not (SET GLOBAL, CREATE USER). */
export function mariadbRoot(server: DbServer, sql: string): void {
  const r = spawnSync(
    which('mariadb')!,
    ['--no-defaults', `--socket=${join(server.dir, 'sock')}`, '-uroot', '-e', sql],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`mariadb as root: ${r.stderr}`);
}

/** `binlog: false` starts it without the binary log (what a server without log_bin answers). */
export async function mariadbServer(opts: { binlog?: boolean } = {}): Promise<DbServer> {
  const dir = mkdtempSync(join(tmpdir(), 'hn-maria-'));
  const data = join(dir, 'data');
  const socket = join(dir, 'sock');
  const init = spawnSync(
    which('mariadb-install-db')!,
    ['--no-defaults', '--user=root', `--datadir=${data}`, '--auth-root-authentication-method=normal', '--skip-test-db'],
    { encoding: 'utf8' },
  );
  if (init.status !== 0) throw new Error(`mariadb-install-db failed: ${init.stderr}${init.stdout}`);
  const port = await freePort();
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  let child: ChildProcess | undefined;
  let created = false;
  const server: DbServer = {
    engine: 'mariadb',
    port,
    user: 'hive',
    password,
    database: 'hive',
    dir,
    logFile: '',
    async start() {
      const args = [
        '--no-defaults',
        '--user=root',
        `--datadir=${data}`,
        `--port=${port}`,
        '--bind-address=127.0.0.1',
        `--socket=${socket}`,
        `--pid-file=${join(dir, 'pid')}`,
        ...(opts.binlog === false
          ? ['--skip-log-bin']
          : ['--log-bin=mariadb-bin', '--binlog-format=ROW', '--server-id=1', '--log-bin-trust-function-creators=1']),
        '--innodb-buffer-pool-size=16M',
        '--innodb-flush-log-at-trx-commit=0',
        '--innodb-doublewrite=0',
        '--performance-schema=0',
        `--log-error=${join(dir, 'error.log')}`,
      ];
      child = track(spawn(which('mariadbd')!, args, { stdio: 'ignore' }));
      await waitForPort(port, 30_000, 'mariadbd', child);
      if (!created) {
        // root logs in over the socket without a password; the tests use a password user over TCP
        const sql = `CREATE DATABASE hive; CREATE USER 'hive'@'%' IDENTIFIED BY '${password}'; GRANT ALL ON hive.* TO 'hive'@'%'; GRANT PROCESS, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'hive'@'%';`;
        const r = spawnSync(which('mariadb')!, ['--no-defaults', `--socket=${socket}`, '-uroot', '-e', sql], {
          encoding: 'utf8',
        });
        if (r.status !== 0) throw new Error(`creating the MariaDB user failed: ${r.stderr}`);
        created = true;
      }
    },
    stop: () => stopChild(child, 'SIGTERM'),
    async remove() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
