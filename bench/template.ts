/**
 * Template render rate: a queue fan-out template (range over a Data list creating one entry per
 * element) and an exec template (command plus arguments from Data), parsed once and executed many
 * times. When `go` is on PATH the same templates run under Go's text/template in the same run
 * (bench/go-template) and the ratio ours/Go is printed (target ≥ 0.5).
 * Run: npx tsx bench/template.ts   (BENCH_SECONDS per measurement, default 3)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QueueTemplate, renderQueueTemplate } from '../template/dialects/queue.js';
import { renderExecTemplate } from '../template/dialects/exec.js';
import { emptyMap, makeMessage, mapOf } from '../protocol/message.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const here = dirname(fileURLToPath(import.meta.url));
const goDir = join(here, 'go-template');
const queueFile = join(goDir, 'queue.tmpl');
const execFile = join(goDir, 'exec.tmpl');
const queueSource = readFileSync(queueFile, 'utf8');
const execSource = readFileSync(execFile, 'utf8');

const files = Array.from({ length: 20 }, (_, i) => `/data/file-${String(i).padStart(2, '0')}.txt`);

/** Renders per second of `once`, after a warm-up, over about SECONDS seconds. */
function measure(once: () => void): number {
  for (let i = 0; i < 2000; i++) once();
  let n = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(Math.round(SECONDS * 1e9));
  while (process.hrtime.bigint() < deadline) {
    for (let i = 0; i < 100; i++) once();
    n += 100;
  }
  return n / (Number(process.hrtime.bigint() - start) / 1e9);
}

function ours(): { queue: number; exec: number } {
  const request = makeMessage({ Class: 'queue', Operation: 'fanout', Control: emptyMap(), Data: mapOf({ file: files, target: ['archive'] }) });
  const check = new QueueTemplate(queueSource).render('fanout', request);
  if (check.entries.length !== files.length) throw new Error('queue template created the wrong number of entries');
  const queue = measure(() => {
    const r = renderQueueTemplate(queueSource, 'fanout', request);
    if (r.entries.length !== files.length) throw new Error('wrong entry count');
  });
  const data = mapOf({ info: ['first info', 'second'], operation: ['op1', 'op2', 'op3'], file: files });
  const exec = measure(() => {
    const r = renderExecTemplate(execSource, data);
    if (r.command !== 'echo') throw new Error('wrong command');
  });
  return { queue, exec };
}

/** Builds and runs the Go twin; undefined when Go is not available. */
function go(): { queue: number; exec: number } | undefined {
  if (spawnSync('go', ['version'], { stdio: 'ignore' }).status !== 0) return undefined;
  const out = mkdtempSync(join(tmpdir(), 'go-template-bench-'));
  try {
    const bin = join(out, 'go-template');
    execFileSync('go', ['build', '-o', bin, '.'], { cwd: goDir, stdio: ['ignore', 'ignore', 'inherit'] });
    const line = execFileSync(bin, [queueFile, execFile, String(SECONDS)], { encoding: 'utf8' });
    return JSON.parse(line) as { queue: number; exec: number };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

const mine = ours();
console.log(`queue fan-out (20 entries): ${fmt(mine.queue)} renders/s (TypeScript)`);
console.log(`exec command:               ${fmt(mine.exec)} renders/s (TypeScript)`);
const theirs = go();
if (theirs === undefined) {
  console.log('go not on PATH: no Go baseline this run');
} else {
  console.log(`queue fan-out (20 entries): ${fmt(theirs.queue)} renders/s (Go text/template)`);
  console.log(`exec command:               ${fmt(theirs.exec)} renders/s (Go text/template)`);
  const rq = mine.queue / theirs.queue;
  const re = mine.exec / theirs.exec;
  console.log(`ratio ours/Go: queue ${rq.toFixed(2)}, exec ${re.toFixed(2)} (target >= 0.5)`);
}
