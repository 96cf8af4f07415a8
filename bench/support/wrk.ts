/**
 * HTTP load with wrk (Debian package `wrk`), run as a child process so the servers under test keep
 * their event loop: one thread, N connections, POSTing one JSON body. Shared by the gateway and
 * start-up benches.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from '../lib.js';

export interface WrkResult {
  rps: number;
  /** Requests answered in the run (its length is a little more than asked: rps × seconds is not exact). */
  requests: number;
  p50: number;
  p99: number;
  /** Non-2xx/3xx responses plus socket errors: must be 0 for the figures to mean anything. */
  errors: number;
}

export const wrkInstalled = (): boolean => !spawnSync('wrk', ['--version']).error;

/** A wrk Lua script that POSTs `body` as JSON; returns its path. */
export function postScript(body: string): string {
  const script = join(mkdtempSync(join(tmpdir(), 'hn-bench-wrk-')), 'post.lua');
  writeFileSync(
    script,
    `wrk.method = "POST"\nwrk.body = '${body}'\nwrk.headers["Content-Type"] = "application/json"\n`,
  );
  return script;
}

function toMs(v: string): number {
  const m = /^([\d.]+)(us|ms|s)$/.exec(v.trim());
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === 'us' ? n / 1000 : m[2] === 's' ? n * 1000 : n;
}

export async function wrk(
  url: string,
  opts: { connections: number; seconds: number; script: string },
): Promise<WrkResult> {
  // asynchronous on purpose: a spawnSync would block the event loop the servers answer on
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn('wrk', [
      '-t',
      '1',
      '-c',
      String(opts.connections),
      '-d',
      `${opts.seconds}s`,
      '--latency',
      '-s',
      opts.script,
      url,
    ]);
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.stderr.on('data', (c: Buffer) => (text += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}:\n${text}`))));
  });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = non2xx + (socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0);
  const requests = Number(/(\d+) requests in /.exec(out)?.[1] ?? NaN);
  const result = {
    rps,
    requests,
    p50: toMs(/\n\s+50%\s+(\S+)/.exec(out)?.[1] ?? ''),
    p99: toMs(/\n\s+99%\s+(\S+)/.exec(out)?.[1] ?? ''),
    errors,
  };
  if (![result.rps, result.requests, result.p50, result.p99].every(Number.isFinite))
    throw new Error(`cannot read wrk's output:\n${out}`);
  return result;
}

/** Medians of the rounds of one target; errors summed over all rounds. */
export function summarize(rounds: WrkResult[]): WrkResult {
  return {
    rps: median(rounds.map((r) => r.rps)),
    requests: rounds.reduce((a, r) => a + r.requests, 0),
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    errors: rounds.reduce((a, r) => a + r.errors, 0),
  };
}
