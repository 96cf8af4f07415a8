/**
 * Instructions per request of a `hivenode run` process, counted by valgrind's callgrind (Debian
 * package `valgrind`): the count of a fixed number of requests does not move with other load, where
 * CPU time on a shared machine spreads ±15% between identical processes, too much to read a 2%
 * difference from. The server runs under callgrind with collection of every thread kept apart; this
 * process is the client (keep-alive HTTP, a few connections), unmeasured. The warm-up runs with
 * callgrind's instrumentation off; after it (V8 has compiled the hot paths) instrumentation is
 * switched on (`callgrind_control --instr=on`), the counters are zeroed (`-z`), `requests` requests are
 * sent, and the counts are dumped (`callgrind_control -d`): what the dump holds is whole requests —
 * parsing, the hive, the echo, the answer, the garbage collector's threads — and nothing of start-up.
 * Callgrind checks for those commands only while the process runs, so an idle server is woken by
 * single requests until it answers; they and the request in flight at either end make the count
 * off by about two requests of `requests`.
 */
import type { ChildProcess } from 'node:child_process';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';

export const callgrindInstalled = (): boolean =>
  !spawnSync('valgrind', ['--version']).error && !spawnSync('callgrind_control', ['-h']).error;

export interface InstructionCount {
  /** Instructions per request, all threads (the main thread, V8's and libuv's helpers). */
  perRequest: number;
  /** Instructions per request of the main thread alone (the event loop). */
  mainPerRequest: number;
  /**
   * Of mainPerRequest, what the old generation's collections took (marking, compacting, sweeping:
   * the calls into them, whole). One such collection costs as much as thousands of requests and
   * falls inside the counted window or not: it moved a mode's count by 11,000 instructions a request
   * between two runs of one build, where everything else stayed within ~1,000.
   */
  majorGcPerRequest: number;
  /**
   * Of mainPerRequest, what V8's compilers took (a function optimized once it is hot, whenever that
   * falls): ~9,000 instructions a request after a warm-up of 6,000 requests, still compiling the
   * long tail of warm functions; after 30,000 requests from ~100 to ~4,000 (up to ~8,000 exported),
   * as a late optimization falls inside the window or not.
   */
  compilePerRequest: number;
  /** Requests counted. */
  requests: number;
  /** The dump files (callgrind_annotate reads them: where the instructions went). */
  files: string[];
}

export interface CountOptions {
  /** The hivenode CLI and its arguments (`…/hivenode.js run node.json`), after node's own flags. */
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Where the dumps are written. */
  dir: string;
  /** Requests before counting (warm-up) and counted. */
  warmup: number;
  requests: number;
  connections: number;
  /** One request: its path on the port the process prints, and its JSON body. */
  path: string;
  body: string;
}

const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Sends one POST and resolves when its answer has been read; rejects unless it is 200. */
function post(agent: Agent, port: number, path: string, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`answered ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** `total` POSTs, `connections` at a time. */
async function posts(agent: Agent, port: number, o: CountOptions, total: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: o.connections }, async () => {
      while (next < total) {
        next++;
        await post(agent, port, o.path, o.body);
      }
    }),
  );
}

/** Runs callgrind_control with `flag` on `pid`, sending single requests until it has been answered. */
async function control(flag: string, pid: number, agent: Agent, port: number, o: CountOptions): Promise<void> {
  let done = false;
  const ran = new Promise<void>((resolve, reject) =>
    execFile('callgrind_control', [flag, String(pid)], (err) => ((done = true), err ? reject(err) : resolve())),
  );
  while (!done) {
    await post(agent, port, o.path, o.body);
    await wait(50);
  }
  await ran;
}

/** The `summary:`/`totals:` count of one callgrind dump file. */
function total(file: string): number {
  const m = /^(?:summary|totals): (\d+)/m.exec(readFileSync(file, 'utf8'));
  return m ? Number(m[1]) : 0;
}

// V8's functions of the old generation's collections (names as callgrind gives them, C++ symbols)
const MAJOR_GC =
  /v8::internal::(?:IncrementalMarking|MarkCompactCollector|ConcurrentMarking|MarkingBarrier|Sweeper|MemoryReducer|ArrayBufferSweeper)\b|v8::internal::Heap::(?:StartIncrementalMarking|FinalizeIncrementalMarking|MarkCompact)\b/;

// V8's compilers (names as callgrind gives them): TurboFan optimizing a function that got hot (on the
// main thread: the servers run --single-threaded), Sparkplug's baseline code, a first lazy compile
const COMPILE =
  /v8::internal::(?:Runtime_Compile\w*|Runtime_InstallBaselineCode|Compiler::\w+|compiler::\w+|baseline::\w+|maglev::\w+|OptimizingCompileDispatcher)/;

/**
 * The instructions of one dump spent in what `kinds` match: for each, the inclusive cost of every
 * call into one of its functions from a function that is not one (so nested calls count once).
 */
function setApart<K extends string>(file: string, kinds: Record<K, RegExp>): Record<K, number> {
  const entries = Object.entries(kinds) as Array<[K, RegExp]>;
  const sums = Object.fromEntries(entries.map(([k]) => [k, 0])) as Record<K, number>;
  const names = new Map<string, string>();
  let caller = '';
  let callee = '';
  let costOfCall = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const fn = /^(c?)fn=\((\d+)\)(?: (.*))?$/.exec(line);
    if (fn) {
      if (fn[3] !== undefined) names.set(fn[2]!, fn[3]);
      const name = names.get(fn[2]!) ?? '';
      if (fn[1] === 'c') callee = name;
      else caller = name;
      continue;
    }
    if (line.startsWith('calls=')) {
      costOfCall = true;
      continue;
    }
    if (costOfCall) {
      costOfCall = false;
      const cost = /^\S+ (\d+)$/.exec(line);
      if (cost) for (const [k, re] of entries) if (re.test(callee) && !re.test(caller)) sums[k] += Number(cost[1]);
    }
  }
  return sums;
}

/** Counts the instructions of `o.requests` requests of one server process under callgrind. */
export async function countInstructions(o: CountOptions): Promise<InstructionCount> {
  const out = join(o.dir, 'callgrind.out.%p');
  const child: ChildProcess = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--separate-threads=yes',
      '--instr-atstart=no',
      `--callgrind-out-file=${out}`,
      process.execPath,
      ...o.args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: o.env },
  );
  let text = '';
  child.stdout!.on('data', (c: Buffer) => (text += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (text += c.toString()));
  const agent = new Agent({ keepAlive: true, maxSockets: o.connections });
  try {
    let port = 0;
    while (port === 0) {
      if (child.exitCode !== null) throw new Error(`the server exited: ${text}`);
      port = Number(/serves HTTP on port (\d+)/.exec(text)?.[1] ?? 0);
      await wait(100);
    }
    // the warm-up runs uninstrumented (valgrind alone, several times faster than counting), so it can
    // be long enough for V8 to have compiled the hot paths before the count begins
    await posts(agent, port, o, o.warmup);
    await control('--instr=on', child.pid!, agent, port, o);
    await control('-z', child.pid!, agent, port, o);
    await posts(agent, port, o, o.requests);
    await control('-d', child.pid!, agent, port, o);
    // the dump after zeroing is part 1: one file per thread, thread 1 the main one
    const files = readdirSync(o.dir)
      .filter((f) => f.startsWith(`callgrind.out.${child.pid}.1-`))
      .map((f) => join(o.dir, f));
    const main = files.find((f) => f.endsWith('-01'));
    if (main === undefined) throw new Error(`no dump of the main thread in ${o.dir}`);
    const all = files.reduce((n, f) => n + total(f), 0);
    const apart = setApart(main, { majorGc: MAJOR_GC, compile: COMPILE });
    return {
      perRequest: all / o.requests,
      mainPerRequest: total(main) / o.requests,
      majorGcPerRequest: apart.majorGc / o.requests,
      compilePerRequest: apart.compile / o.requests,
      requests: o.requests,
      files,
    };
  } finally {
    agent.destroy();
    child.kill('SIGKILL');
  }
}
