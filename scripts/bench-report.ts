/**
 * Writes BENCHMARKS.md (to stdout) from the output of a `make bench` run: scripts/bench.sh leaves, per
 * bench, `<name>.log` (everything it printed), `<name>.seconds` and `<name>.exit` in one directory.
 * The `BENCH {…}` lines (bench/lib.ts `report`) become the tables; the human lines are kept below each
 * table, folded, so nothing a bench says is lost.
 * Usage: node --import tsx scripts/bench-report.ts <log directory> <total seconds>
 * BENCH_MACHINE_NOTE describes the machine in the header (default: a shared machine of N cores).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Figure } from '../bench/lib.js';
import { FIGURE_PREFIX } from '../bench/lib.js';

type Reported = Figure & { ratio?: number };

interface Section {
  name: string;
  seconds: number;
  exit: number;
  figures: Reported[];
  lines: string[];
}

/** Sections in reading order (the peers first); benches not listed follow alphabetically. */
const ORDER = [
  'gateway',
  'gateway-tls',
  'gateway-tracing',
  'console-cost',
  'bullmq',
  'queue',
  'queue-scale',
  'queue-dead',
  'queue-dead-paging',
  'queue-ops',
  'queue-jetstream',
  'hive',
  'sql',
  'sql-transaction',
  'sql-batch',
  'httpclient',
  'exec',
  'syslog',
  'syslog-relp',
  'startup',
  'reload',
  'template',
];
const TITLES: Record<string, string> = {
  gateway: 'Gateway (HTTP) — against raw node:http and Node-RED',
  'gateway-tls': 'Gateway over HTTPS — against the same gateway over plain HTTP',
  'gateway-tracing':
    'Gateway with tracing — OTLP export at 100% sampling against tracing off, and tracing off against the trace code bypassed',
  'console-cost': 'Operator console — the gateway with the console open in a browser against without',
  bullmq: 'Durable queue — against BullMQ on redis',
  queue: 'Durable queue — against raw fsync’d appends',
  'queue-scale': 'Durable queue as the store grows (10^4 / 10^5 / 10^6 entries; recovery of 10^7)',
  'queue-dead': 'Durable queue with 10^6 dead entries kept — memory against an empty store',
  'queue-dead-paging':
    'Durable queue: enqueues while a client pages 10^5 dead entries — against the same enqueues with no paging',
  'queue-ops': 'Durable queue — idempotency keys and group limits against the plain queue',
  'queue-jetstream': 'Queue on JetStream (R1, R3) — against bare nats.js JetStream and BullMQ',
  hive: 'The hive — against bare nact and bare nats.js',
  sql: 'SQL service — against the raw drivers and direct sequelize',
  'sql-transaction': 'SQL raw transactions — against direct sequelize transactions',
  'sql-batch': 'SQL service, SQL_BATCH — 10,000 rows in one message against the raw driver and single-row messages',
  httpclient: 'HTTP client — against raw undici and got',
  exec: 'Exec — against raw spawn',
  syslog: 'Syslog receiver — UDP against a raw node:dgram receiver, TCP against rsyslogd',
  'syslog-relp':
    'Syslog over RELP — receive into a SQLite queue, each message answered once stored, against plain TCP into the same queue',
  startup: 'A whole node: start-up time and memory',
  reload: 'Reloading a node under load — p99 latency during reloads against the same load without',
  template: 'Templates — against Go text/template',
};

function readSection(dir: string, name: string): Section {
  const text = readFileSync(join(dir, `${name}.log`), 'utf8');
  const number = (ext: string): number =>
    existsSync(join(dir, `${name}.${ext}`)) ? Number(readFileSync(join(dir, `${name}.${ext}`), 'utf8').trim()) : NaN;
  const figures: Reported[] = [];
  const lines: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith(FIGURE_PREFIX)) figures.push(JSON.parse(line.slice(FIGURE_PREFIX.length)) as Reported);
    else if (line.trim() !== '') lines.push(line);
  }
  return { name, seconds: number('seconds'), exit: number('exit'), figures, lines };
}

/** Whole numbers from 100 up, three significant digits below (1.58 ms, 9.76 s, 0.85). */
function num(n: number): string {
  if (!Number.isFinite(n)) return '—';
  return Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en') : Number(n.toPrecision(3)).toString();
}

const value = (n: number, unit: string): string => `${num(n)} ${unit}`;
const cell = (s: string): string => s.replaceAll('|', '\\|');

function targetCell(f: Reported): string {
  if (f.target === undefined) return '';
  return `${f.target} ${f.met === true ? '✔ met' : f.met === false ? '✘ not met' : ''}`.trim();
}

function ratioCell(f: Reported): string {
  if (f.ratio === undefined) return '';
  // a ratio that misses its target by less than the rounding shows the digit that decides it
  const digits = f.met === false && f.ratio.toFixed(2) === /[\d.]+/.exec(f.target ?? '')?.[0] ? 4 : 2;
  return `${f.ratio.toFixed(digits)}${f.lowerIsBetter ? ' ↓' : ''}`;
}

function table(figures: Reported[]): string[] {
  const rows = ['| figure | hivenode | baseline or peer | baseline | ratio | target |', '|---|--:|---|--:|--:|---|'];
  for (const f of figures) {
    const base = f.baselineValue === undefined ? '' : value(f.baselineValue, f.unit);
    rows.push(
      `| ${cell(f.figure)} | ${value(f.hivenode, f.unit)} | ${cell(f.baseline ?? '—')} | ${base} | ${ratioCell(f)} | ${cell(targetCell(f))} |`,
    );
  }
  return rows;
}

function machine(): string[] {
  const cpu = cpus();
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return [
    `- date: ${date}`,
    `- machine: ${cpu.length} cores, ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()} — ${process.env.BENCH_MACHINE_NOTE ?? `a **shared** ${cpu.length}-core machine: other work may run beside the benches`} (load average ${loadavg()[0]!.toFixed(2)} when the report was written), so absolute figures move from run to run; the ratios, measured side by side in interleaved rounds, move much less`,
    `- Node.js ${process.version}`,
  ];
}

const PEERS_NOTE = [
  '## Peers and baselines',
  '',
  'Peers are installed for the benches only (`bench/peers/package.json`, `npm ci --prefix bench/peers`, run by `scripts/bench.sh`); they are never a dependency of hivenode. Servers (PostgreSQL, MariaDB, redis-server, nats-server) come from Debian packages and are started privately by the benches on free ports on 127.0.0.1, in temporary directories, and stopped afterwards.',
  '',
  '- **Node-RED** — its own process, a flow file `http in → function → http response` answering the same JSON as the gateway; same wrk load, same rounds.',
  '- **BullMQ** — on a private `redis-server` with `appendonly yes`, once with `appendfsync always` (acknowledged means on disk, as in hivenode’s queue) and once with `everysec`; same producers, same number of jobs, consumer concurrency equal to the queue’s DeliveryConcurrency.',
  '- **Physical baselines** — raw node:http, raw nact, raw nats.js, raw fsync’d appends, direct sequelize and the raw drivers (sqlite3, pg, mysql2), raw node:dgram, raw child_process.spawn, raw undici and got, Go text/template.',
  '- **Redpanda Connect — not measured here.** It is a Go binary distributed from GitHub releases and its own package repositories, available neither from the npm registry nor from Debian, the two sources this suite installs from; building it from source would mean fetching its Go modules from outside both. Its figures would be for a different runtime set up by hand, so none is claimed.',
  '- **Hand-written services** — the raw baselines above are exactly that: the smallest hand-written program doing the same work on the same machine in the same run.',
];

function main(): void {
  const [dir, total] = process.argv.slice(2);
  if (!dir) throw new Error('usage: bench-report.ts <log directory> <total seconds>');
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.log'))
    .map((f) => f.slice(0, -4));
  names.sort((a, b) => (ORDER.indexOf(a) + 1 || 99) - (ORDER.indexOf(b) + 1 || 99) || a.localeCompare(b));
  const sections = names.map((n) => readSection(dir, n));
  const out = [
    '# Benchmarks',
    '',
    'Generated by `make bench` (scripts/bench.sh → scripts/bench-report.ts) — do not edit by hand. Every figure is measured against a named baseline or peer **in the same run on the same machine**, as the median of at least 3 interleaved rounds unless the figure says otherwise.',
    '',
    ...machine(),
    `- reproduce: \`make bench\` (all, ${total ?? '?'} s this time); one bench alone: \`make build\` then \`node --expose-gc dist/bench/<name>.js\` (round sizes through the BENCH_* variables at the top of each file)`,
    '',
    '**ratio** = hivenode ÷ baseline (where a bench prints its rounds’ ratios, the median of them: each round’s pair ran back to back). For rates (req/s, entries/s, …) above 1 favours hivenode; for times and memory (marked ↓) below 1 does. A **target** is the goal the bench states for hivenode (of the ratio, or of the value where it carries a unit).',
    '',
    '## Against peers',
    '',
    ...table(sections.flatMap((s) => s.figures.filter((f) => f.peer === true))),
    '',
    '## Targets',
    '',
    ...table(sections.flatMap((s) => s.figures.filter((f) => f.target !== undefined))),
    '',
    ...PEERS_NOTE,
  ];
  for (const s of sections) {
    out.push('', `## ${TITLES[s.name] ?? s.name} (\`bench/${s.name}.ts\`, ${num(s.seconds)} s)`, '');
    if (s.exit !== 0)
      out.push(
        `**The bench exited with code ${s.exit}**: its figures may be missing or incomplete (see its output).`,
        '',
      );
    out.push(...(s.figures.length > 0 ? table(s.figures) : ['No figures: see the output below.']));
    out.push('', '<details><summary>bench output</summary>', '', '```', ...s.lines, '```', '', '</details>');
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

main();
