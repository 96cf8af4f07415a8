/** The real syslog peers of the adapter tests: util-linux `logger` and a private rsyslogd (with its gtls TLS driver). */
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, openSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { requireInstalled } from '../../support/installed.js';

export const have = (cmd: string): boolean =>
  spawnSync('sh', ['-c', `command -v ${cmd} || test -x /usr/sbin/${cmd}`]).status === 0;

/** Skips the suite when logger or rsyslogd is missing, except on CI where that is a failure. */
export function needPeers(ctx: Mocha.Context): void {
  requireInstalled(
    have('logger') && have('rsyslogd'),
    'logger and rsyslogd are needed (scripts/test.sh installs bsdutils and rsyslog)',
    ctx,
  );
}

/** Whether rsyslog's modules of these names are installed (in /usr/lib/rsyslog or /usr/lib/<arch>/rsyslog). */
function haveRsyslogModules(...modules: string[]): boolean {
  const lib = '/usr/lib';
  const dirs = [lib, ...readdirSync(lib).map((d) => join(lib, d))];
  return dirs.some((d) => modules.every((m) => existsSync(join(d, 'rsyslog', `${m}.so`))));
}

/** Whether rsyslog's GnuTLS network stream driver (Debian rsyslog-gnutls) is installed. */
export function haveGtls(): boolean {
  return haveRsyslogModules('lmnsd_gtls');
}

/** Like needPeers, and also rsyslog's gtls driver (scripts/servers.sh installs rsyslog-gnutls). */
export function needGtlsPeers(ctx: Mocha.Context): void {
  needPeers(ctx);
  requireInstalled(haveGtls(), "rsyslog's gtls driver is needed (scripts/servers.sh installs rsyslog-gnutls)", ctx);
}

/** Runs `logger -n 127.0.0.1 -P port …` and requires it to succeed. */
export function logger(port: number, args: string[]): void {
  const r = spawnSync('logger', ['-n', '127.0.0.1', '-P', String(port), ...args]);
  expect(r.status, r.stderr.toString()).to.equal(0);
}

/** Starts rsyslogd in the foreground on a private configuration in `dir`; stop it with kill(). Its own messages go to `dir`/rsyslogd.log. */
export function startRsyslog(dir: string, config: string[]): ChildProcess {
  const conf = join(dir, 'rsyslog.conf');
  writeFileSync(conf, [`global(workDirectory="${dir}")`, ...config, ''].join('\n'));
  return spawn(
    existsSync('/usr/sbin/rsyslogd') ? '/usr/sbin/rsyslogd' : 'rsyslogd',
    ['-n', '-f', conf, '-i', join(dir, 'rsyslog.pid')],
    { stdio: ['ignore', openSync(join(dir, 'rsyslogd.log'), 'a'), openSync(join(dir, 'rsyslogd.log'), 'a')] },
  );
}

/** Whether rsyslog's RELP modules (Debian rsyslog-relp: imrelp, omrelp) are installed. */
export function haveRelp(): boolean {
  return haveRsyslogModules('imrelp', 'omrelp');
}

/** Like needPeers, and also rsyslog's RELP modules (scripts/servers.sh installs rsyslog-relp). */
export function needRelpPeers(ctx: Mocha.Context): void {
  needPeers(ctx);
  requireInstalled(haveRelp(), "rsyslog's RELP modules are needed (scripts/servers.sh installs rsyslog-relp)", ctx);
}
