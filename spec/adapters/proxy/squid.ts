/**
 * A private squid for the proxy tests: its own config, password file and logs in a temp directory,
 * a free port on 127.0.0.1, basic authentication (one user), nothing cached; killed by the tests.
 * Never the system squid (Debian's package may run one on 3128): nothing here reads or touches it.
 * Squid rather than tinyproxy: tinyproxy 1.11 answers wrong credentials with 401 and
 * WWW-Authenticate, which a client cannot tell from the upstream's own 401 on plain http; squid
 * answers 407 for both plain http and CONNECT.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../temp.js';
import { freePort, waitForPort } from '../ports.js';

export interface Squid {
  port: number;
  user: string;
  password: string;
  /** http://[user:password@]127.0.0.1:port; `auth` false leaves the credentials out. */
  url(credentials?: { user: string; password: string } | false): string;
  /** The access log so far: one line per request (method, URL or CONNECT host:port, user). */
  accessLog(): string;
  stop(): Promise<void>;
}

const binary = (): string => (existsSync('/usr/sbin/squid') ? '/usr/sbin/squid' : 'squid');

/** Why a proxy test cannot run without squid (requireInstalled's reason): `make test` installs it. */
export const SQUID_MISSING =
  'squid is not installed (scripts/test.sh installs it: bash scripts/servers.sh squid:squid)';

/** True when squid is installed (scripts/test.sh installs it through scripts/servers.sh). */
export function squidAvailable(): boolean {
  return spawnSync(binary(), ['-v']).status === 0;
}

/** `hosts`: lines of a hosts file squid resolves names with before DNS (a name answered differently than here). */
export async function startSquid(options: { hosts?: string } = {}): Promise<Squid> {
  const port = await freePort();
  const dir = tempDir('hn-squid-');
  // started as root, squid works as the unprivileged 'proxy' user: it must reach the directory and files
  chmodSync(dir, 0o777);
  const user = 'hive';
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  const passwd = join(dir, 'passwd');
  writeFileSync(passwd, `${user}:${execFileSync('openssl', ['passwd', '-apr1', password]).toString().trim()}\n`, {
    mode: 0o644,
  });
  const accessLog = join(dir, 'access.log');
  const conf = join(dir, 'squid.conf');
  const hostsFile = join(dir, 'hosts');
  if (options.hosts !== undefined) writeFileSync(hostsFile, `${options.hosts}\n`, { mode: 0o644 });
  writeFileSync(
    conf,
    [
      `http_port 127.0.0.1:${port}`,
      `pid_filename ${join(dir, 'squid.pid')}`,
      `access_log stdio:${accessLog}`,
      `cache_log ${join(dir, 'cache.log')}`,
      `coredump_dir ${dir}`,
      'cache deny all',
      'cache_mem 8 MB',
      'visible_hostname hivenode-test-proxy',
      'shutdown_lifetime 0 seconds',
      ...(options.hosts !== undefined ? [`hosts_file ${hostsFile}`] : []),
      `auth_param basic program /usr/lib/squid/basic_ncsa_auth ${passwd}`,
      'auth_param basic children 2 startup=1',
      'acl users proxy_auth REQUIRED',
      'http_access allow users',
      'http_access deny all',
    ].join('\n'),
    { mode: 0o644 },
  );
  const child: ChildProcess = spawn(binary(), ['-N', '-f', conf], { stdio: 'ignore' });
  await waitForPort(port, 15_000, 'squid', child);
  return {
    port,
    user,
    password,
    url: (credentials = { user, password }) =>
      credentials ? `http://${credentials.user}:${credentials.password}@127.0.0.1:${port}` : `http://127.0.0.1:${port}`,
    accessLog: () => (existsSync(accessLog) ? readFileSync(accessLog, 'utf8') : ''),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      });
    },
  };
}
