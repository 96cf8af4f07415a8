/**
 * A private rsyslogd for the syslog benches: imtcp on a free port (octet counting and LF framing, as
 * it takes by default) writing each message's text to a file with omfile, in a temporary directory;
 * stopped by stop(). Its rate is read from the file's size: every bench line has the same text.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const haveRsyslogd = (): boolean =>
  existsSync('/usr/sbin/rsyslogd') || spawnSync('sh', ['-c', 'command -v rsyslogd']).status === 0;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export interface BenchRsyslog {
  port: number;
  /** Bytes written to its output file so far. */
  written(): number;
  stop(): Promise<void>;
}

export async function startBenchRsyslog(): Promise<BenchRsyslog> {
  const dir = mkdtempSync(join(tmpdir(), 'hn-bench-rsyslog-'));
  const port = await freePort();
  const out = join(dir, 'out.log');
  const conf = join(dir, 'rsyslog.conf');
  writeFileSync(
    conf,
    [
      `global(workDirectory="${dir}")`,
      'module(load="imtcp")',
      `input(type="imtcp" address="127.0.0.1" port="${port}" ruleset="bench")`,
      'template(name="msgonly" type="string" string="%msg%\\n")',
      'ruleset(name="bench") {',
      `  action(type="omfile" file="${out}" template="msgonly")`,
      '}',
      '',
    ].join('\n'),
  );
  const log = openSync(join(dir, 'rsyslogd.log'), 'a');
  const child: ChildProcess = spawn(
    existsSync('/usr/sbin/rsyslogd') ? '/usr/sbin/rsyslogd' : 'rsyslogd',
    ['-n', '-f', conf, '-i', join(dir, 'rsyslog.pid')],
    { stdio: ['ignore', log, log] },
  );
  const deadline = Date.now() + 15_000;
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`rsyslogd did not listen on ${port} (see ${join(dir, 'rsyslogd.log')})`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    written: () => (existsSync(out) ? statSync(out).size : 0),
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
