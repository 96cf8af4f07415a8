/**
 * Template render rate: a queue fan-out template (range over a Data list creating one entry per
 * element) and an exec template (command plus arguments from Data), parsed once and executed many
 * times. When `go` is on PATH the same templates run under Go's text/template in the same run
 * (bench/go-template, built once) and the ratio ours/Go is printed (target ≥ 0.5); the two alternate
 * for BENCH_ROUNDS rounds and each rate is the median.
 * Run: node --import tsx bench/template.ts   (BENCH_SECONDS per measurement, default 1)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueueTemplate, renderQueueTemplate } from '../template/dialects/queue.js';
import { renderExecTemplate } from '../template/dialects/exec.js';
import { emptyMap, makeMessage, mapOf } from '../protocol/message.js';
import { REPO, fmt, median, report } from './lib.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const goDir = join(REPO, 'bench', 'go-template');
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
  const request = makeMessage({
    Class: 'queue',
    Operation: 'fanout',
    Control: emptyMap(),
    Data: mapOf({ file: files, target: ['archive'] }),
  });
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

/** Builds the Go twin once; undefined when Go is not available. */
function buildGo(out: string): string | undefined {
  if (spawnSync('go', ['version'], { stdio: 'ignore' }).status !== 0) return undefined;
  const bin = join(out, 'go-template');
  execFileSync('go', ['build', '-o', bin, '.'], { cwd: goDir, stdio: ['ignore', 'ignore', 'inherit'] });
  return bin;
}

const runGo = (bin: string): { queue: number; exec: number } =>
  JSON.parse(execFileSync(bin, [queueFile, execFile, String(SECONDS)], { encoding: 'utf8' })) as {
    queue: number;
    exec: number;
  };

const out = mkdtempSync(join(tmpdir(), 'go-template-bench-'));
try {
  const goBin = buildGo(out);
  const mine: Array<{ queue: number; exec: number }> = [];
  const theirs: Array<{ queue: number; exec: number }> = [];
  for (let r = 0; r < ROUNDS; r++) {
    mine.push(ours());
    if (goBin) theirs.push(runGo(goBin));
  }
  const oursQueue = median(mine.map((m) => m.queue));
  const oursExec = median(mine.map((m) => m.exec));
  console.log(`${SECONDS} s per measurement, rounds ${ROUNDS} (median), interleaved`);
  console.log(`queue fan-out (20 entries): ${fmt(oursQueue)} renders/s (TypeScript)`);
  console.log(`exec command:               ${fmt(oursExec)} renders/s (TypeScript)`);
  if (!goBin) {
    console.log('go not on PATH: no Go baseline this run');
    report({ figure: 'queue fan-out template (20 entries)', hivenode: oursQueue, unit: 'renders/s' });
    report({ figure: 'exec command template', hivenode: oursExec, unit: 'renders/s' });
  } else {
    const goQueue = median(theirs.map((t) => t.queue));
    const goExec = median(theirs.map((t) => t.exec));
    console.log(`queue fan-out (20 entries): ${fmt(goQueue)} renders/s (Go text/template)`);
    console.log(`exec command:               ${fmt(goExec)} renders/s (Go text/template)`);
    console.log(
      `ratio ours/Go: queue ${(oursQueue / goQueue).toFixed(2)}, exec ${(oursExec / goExec).toFixed(2)} (target >= 0.5)`,
    );
    const baseline = `Go text/template (${execFileSync('go', ['env', 'GOVERSION'], { encoding: 'utf8' }).trim()})`;
    report({
      figure: 'queue fan-out template (20 entries)',
      hivenode: oursQueue,
      unit: 'renders/s',
      baseline,
      baselineValue: goQueue,
      target: '≥ 0.5',
      met: oursQueue / goQueue >= 0.5,
    });
    report({
      figure: 'exec command template',
      hivenode: oursExec,
      unit: 'renders/s',
      baseline,
      baselineValue: goExec,
      target: '≥ 0.5',
      met: oursExec / goExec >= 0.5,
    });
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
