/** The rsyslog side of the RELP tests: its configurations (omrelp out, imrelp in), feeding it, and reading what it wrote. */
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';

/** Writes `lines` to rsyslogd's imtcp, LF-framed, and waits until they are all written. */
export async function feedRsyslog(port: number, lines: string[]): Promise<void> {
  const socket = connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  await new Promise<void>((resolve) => socket.end(lines.map((l) => `${l}\n`).join(''), resolve));
}

/** The numbers n of the test messages `prefix`-n in a file rsyslogd wrote (one per line; a message written twice is there twice). */
export function numbersIn(file: string, prefix: string): number[] {
  if (!existsSync(file)) return [];
  const re = new RegExp(`${prefix}-(\\d+)`);
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => re.exec(l)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number);
}

/** The rsyslog side of a RELP test: imtcp in (rsyslog's own messages stay out), omrelp out to `relpPort`. */
export function omrelpConfig(inPort: number, relpPort: number, extra = ''): string[] {
  return [
    'module(load="imtcp")',
    'module(load="omrelp")',
    `input(type="imtcp" address="127.0.0.1" port="${inPort}" ruleset="forward")`,
    'ruleset(name="forward" queue.type="LinkedList" queue.size="200000") {',
    `  action(type="omrelp" target="127.0.0.1" port="${relpPort}" action.resumeRetryCount="-1" action.resumeInterval="1" ${extra})`,
    '}',
  ];
}

/** The rsyslog side of the sender test: imrelp in, every message to `file` (its text only). */
export function imrelpConfig(relpPort: number, file: string): string[] {
  return [
    'module(load="imrelp")',
    `input(type="imrelp" address="127.0.0.1" port="${relpPort}" ruleset="store")`,
    'template(name="msgonly" type="string" string="%msg%\\n")',
    // a direct queue: imrelp answers once omfile has the message, so a SIGKILLed rsyslogd has lost nothing it acknowledged
    'ruleset(name="store" queue.type="Direct") {',
    `  action(type="omfile" file="${file}" template="msgonly")`,
    '}',
  ];
}
