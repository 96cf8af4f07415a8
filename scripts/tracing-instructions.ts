/**
 * The cost of carrying trace context with nothing exported (issue 24), in instructions: gateway
 * strict → embedded hive → echo, one `hivenode run` process per mode under callgrind
 * (support/callgrind.ts), whole requests counted after a warm-up:
 * - off: no OTEL_* variable: a traceparent answered and passed to the echo, the trace scope entered
 *   per message for the log lines;
 * - bypassed: OTEL_PROPAGATORS=none: the trace code returns at its first branch.
 * Instruction counts do not move with other load on a shared machine (CPU time there spreads ±15%
 * between identical processes), so the target, off ≥ 0.98× bypassed, is read here as
 * bypassed instructions / off instructions per request, beside bench/gateway-tracing.ts's CPU time.
 * It is not one of `make bench`'s benches: under callgrind a run takes 5-10 minutes on 2 loaded
 * cores, past a bench's 300 s. The servers run with --single-threaded: V8 compiles and collects on the
 * main thread, so what it optimizes and inlines does not hang on when a compiler thread finished
 * (with those threads, two runs of one build differed by 10% in their main threads' counts), and the
 * collector's work is counted with the requests that made the garbage. Read the figures with their
 * spread: in a window of 8,000 requests V8 still compiled (about 36,000-40,000 instructions a
 * request) and collected (41,000-48,000: a full collection falls inside the window or not), a third
 * of the count; a mode that allocates a little less was counted with 6,800 more of the collector's
 * instructions a request in one run than the build before. The bypassed mode, whose code did not
 * change, came out 215,201 and 214,225 in two runs. Counted over 12,000 requests (the default) the
 * compiling and collecting were 25,000 of 154,000. To see what the trace code itself costs, set the
 * collector's and compiler's functions apart (callgrind_annotate --inclusive=no on the kept dumps),
 * or count more requests. Env: BENCH_WARMUP, BENCH_REQUESTS (requests counted), BENCH_CONNECTIONS,
 * BENCH_KEEP (a directory to keep the dumps in, for callgrind_annotate), BENCH_NODE_FLAGS (more of
 * node's flags for the servers, e.g. --perf-basic-prof: its /tmp/perf-<pid>.map names the compiled
 * JS functions callgrind_annotate shows only by address).
 * Usage: node --import tsx scripts/tracing-instructions.ts (after make build).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from '../bench/lib.js';
import type { InstructionCount } from '../bench/support/callgrind.js';
import { callgrindInstalled, countInstructions } from '../bench/support/callgrind.js';
import { createLogger } from '../actors/shared/logger.js';

const PATH = '/test/op';
const BODY = '{"id":["42"],"name":["bench"]}';
const NODE_FILE = { services: [{ service: 'echo', NAME: 'echo' }, { service: 'gateway', NAME: 'strict', Port: 0, Strict: true, OUTPUTCHANNEL: 'echo', MaxInFlight: 100000 }] };

export interface TracingInstructions {
  off: InstructionCount;
  bypassed: InstructionCount;
  /** bypassed / off instructions per request of the main thread: the throughput off keeps, as the CPU ratio reads it. */
  ratio: number;
}

/** Counts both modes (side by side: the counts do not depend on what else runs). */
export async function tracingInstructions(opts: { warmup?: number; requests?: number; connections?: number; keep?: string } = {}): Promise<TracingInstructions | undefined> {
  const cli = `${REPO}/dist/bin/hivenode.js`;
  if (!existsSync(cli) || !callgrindInstalled()) return undefined;
  const dir = opts.keep ?? mkdtempSync(join(tmpdir(), 'hn-bench-instr-'));
  const file = join(dir, 'node.json');
  writeFileSync(file, JSON.stringify(NODE_FILE));
  const clean = { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_PROPAGATORS: '', OTEL_TRACES_SAMPLER: '' };
  const count = (mode: string, env: NodeJS.ProcessEnv): Promise<InstructionCount> => {
    const modeDir = join(dir, mode);
    rmSync(modeDir, { recursive: true, force: true });
    mkdirSync(modeDir, { recursive: true });
    return countInstructions({
      args: ['--single-threaded', ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean), cli, 'run', file],
      env: { ...clean, ...env },
      dir: modeDir,
      warmup: opts.warmup ?? 6000,
      requests: opts.requests ?? 12000,
      connections: opts.connections ?? 8,
      path: PATH,
      body: BODY,
    });
  };
  try {
    const [off, bypassed] = await Promise.all([count('off', {}), count('bypassed', { OTEL_PROPAGATORS: 'none' })]);
    return { off, bypassed, ratio: bypassed.mainPerRequest / off.mainPerRequest };
  } finally {
    if (opts.keep === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

/** The lines a run prints. */
export function describe(r: TracingInstructions): string[] {
  const f = (n: number): string => Math.round(n).toLocaleString('en');
  return [
    `instructions per request under callgrind (${r.off.requests} requests counted after a warm-up; all threads, then the main thread):`,
    `  strict, tracing off (context carried, no export)          ${f(r.off.perRequest).padStart(9)}  ${f(r.off.mainPerRequest).padStart(9)}`,
    `  strict, trace code bypassed (OTEL_PROPAGATORS=none)       ${f(r.bypassed.perRequest).padStart(9)}  ${f(r.bypassed.mainPerRequest).padStart(9)}`,
    `  difference                                                ${f(r.off.perRequest - r.bypassed.perRequest).padStart(9)}  ${f(r.off.mainPerRequest - r.bypassed.mainPerRequest).padStart(9)}`,
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const log = createLogger({ level: 'info', stream: process.stdout });
  const keep = process.env.BENCH_KEEP;
  const r = await tracingInstructions({
    warmup: process.env.BENCH_WARMUP ? Number(process.env.BENCH_WARMUP) : undefined,
    requests: process.env.BENCH_REQUESTS ? Number(process.env.BENCH_REQUESTS) : undefined,
    connections: process.env.BENCH_CONNECTIONS ? Number(process.env.BENCH_CONNECTIONS) : undefined,
    keep,
  });
  if (r === undefined) {
    log.info('gateway tracing instruction count skipped: needs the build (make build), valgrind and callgrind_control (apt-get install valgrind)');
  } else {
    for (const line of describe(r)) log.info(line);
    log.info(`target off/bypassed >= 0.98 (main-thread instructions per request, bypassed/off): ${r.ratio.toFixed(4)} — ${r.ratio >= 0.98 ? 'met' : 'NOT MET'}`);
  }
}
