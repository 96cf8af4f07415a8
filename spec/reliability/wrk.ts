/**
 * wrk (Debian package) as the load generator of the overload test: a C program on its own process, so
 * the flood is not limited by the test's event loop, with spec/reliability/wrk-statuses.lua counting
 * answers by status. scripts/ensure-packages.sh installs wrk when it is missing.
 */
import { execFile, spawnSync } from 'node:child_process';

const LUA = new URL('./wrk-statuses.lua', import.meta.url).pathname;
const ENSURE = new URL('../../scripts/ensure-packages.sh', import.meta.url).pathname;

/** What one wrk run measured. */
export interface WrkResult {
  /** Answers per HTTP status. */
  statuses: Record<string, number>;
  /** 503 answers without a Retry-After header. */
  noRetryAfter: number;
  /** Connect, read, write errors and timeouts. */
  socketErrors: number;
  seconds: number;
}

/** Installs wrk if needed; undefined when it is there, else the reason it is not. */
export function ensureWrk(): string | undefined {
  const r = spawnSync('bash', [ENSURE, 'wrk:wrk'], { encoding: 'utf8' });
  if (spawnSync('wrk', ['--version']).error === undefined) return undefined;
  return `wrk is not installed and could not be installed: ${r.stderr.trim() || r.stdout.trim()}`;
}

/** Runs wrk against `url` with `connections` for `seconds`. */
export function runWrk(
  url: string,
  opts: { connections: number; threads: number; seconds: number },
): Promise<WrkResult> {
  const args = [
    '-t',
    String(opts.threads),
    '-c',
    String(opts.connections),
    '-d',
    `${opts.seconds}s`,
    '--timeout',
    '10s',
    '-s',
    LUA,
    url,
  ];
  return new Promise((resolve, reject) => {
    execFile('wrk', args, { timeout: (opts.seconds + 30) * 1000 }, (err, stdout, stderr) => {
      const line = /WRK_RESULT (.*)/.exec(stdout)?.[1];
      if (err || !line) reject(new Error(`wrk failed: ${err?.message ?? ''} ${stderr} ${stdout}`));
      else resolve(JSON.parse(line) as WrkResult);
    });
  });
}

/** Answers with `status` per second of the run. */
export function ratePerSecond(r: WrkResult, status?: number): number {
  const n =
    status === undefined ? Object.values(r.statuses).reduce((a, b) => a + b, 0) : (r.statuses[String(status)] ?? 0);
  return n / r.seconds;
}
