/**
 * Mocha's spec reporter plus a table of where the run's time went: every spec file's wall time (its
 * hooks and tests together), the slowest tests and the slowest hooks (a server started in a `before`
 * counts there), each with its share of the whole run. `make test` writes it to
 * test-artifacts/test-durations.txt (and .json, for comparing two runs); it is how the suite is kept
 * under its time budget (README: Development): the files at the top of the table are the ones to make faster
 * or to move to `make chaos`.
 *
 *   npx mocha --reporter ./spec/support/durations-reporter.ts --reporter-option out=test-artifacts/x spec/…
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import Mocha from 'mocha';

const {
  EVENT_RUN_BEGIN,
  EVENT_RUN_END,
  EVENT_SUITE_BEGIN,
  EVENT_SUITE_END,
  EVENT_TEST_END,
  EVENT_HOOK_BEGIN,
  EVENT_HOOK_END,
} = Mocha.Runner.constants;

/** One timed piece: a test or a hook, by its file and full title. */
interface Timed {
  readonly file: string;
  readonly title: string;
  readonly ms: number;
}

/** What the table's JSON twin holds. */
export interface Durations {
  /** From the process's start to the first test: loading (and compiling) every spec file. */
  readonly loadMs: number;
  readonly totalMs: number;
  readonly files: readonly { readonly file: string; readonly ms: number; readonly tests: number }[];
  readonly tests: readonly Timed[];
  readonly hooks: readonly Timed[];
}

const DEFAULT_OUT = 'test-artifacts/test-durations';
const TOP = 60;

function fileOf(runnable: Mocha.Runnable | Mocha.Suite): string {
  for (let at: Mocha.Runnable | Mocha.Suite | undefined = runnable; at !== undefined; at = at.parent) {
    if (at.file !== undefined) return relative(process.cwd(), at.file);
  }
  return '(no file)';
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(1).padStart(7);
}

function share(ms: number, totalMs: number): string {
  return `${((100 * ms) / Math.max(1, totalMs)).toFixed(1).padStart(5)} %`;
}

/** The table as text: files by wall time, then the slowest tests and hooks. */
export function durationsTable(d: Durations): string {
  const lines = [
    `whole run ${(d.totalMs / 1000).toFixed(1)} s after ${(d.loadMs / 1000).toFixed(1)} s loading the spec files, ${d.files.length} files`,
    '',
    'files (wall time: hooks and tests), share of the run, cumulative share',
  ];
  let running = 0;
  for (const f of d.files) {
    running += f.ms;
    lines.push(
      `${seconds(f.ms)} s ${share(f.ms, d.totalMs)} ${share(running, d.totalMs)} cum ${String(f.tests).padStart(4)} tests  ${f.file}`,
    );
  }
  lines.push('', `slowest ${TOP} tests`);
  for (const t of d.tests.slice(0, TOP))
    lines.push(`${seconds(t.ms)} s ${share(t.ms, d.totalMs)}  ${t.file}  ${t.title}`);
  lines.push('', `slowest ${TOP} hooks`);
  for (const h of d.hooks.slice(0, TOP))
    lines.push(`${seconds(h.ms)} s ${share(h.ms, d.totalMs)}  ${h.file}  ${h.title}`);
  return `${lines.join('\n')}\n`;
}

class DurationsReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options: Mocha.MochaOptions & { reporterOption?: { out?: string } }) {
    super(runner, options);
    const out = options.reporterOption?.out ?? process.env.HIVENODE_TEST_DURATIONS ?? DEFAULT_OUT;
    const tests: Timed[] = [];
    const hooks: Timed[] = [];
    const fileMs = new Map<string, { ms: number; tests: number }>();
    const suiteBegan = new Map<Mocha.Suite, number>();
    const hookBegan = new Map<Mocha.Hook, number>();
    let began = Date.now();
    let loadMs = 0;
    const perFile = (file: string): { ms: number; tests: number } => {
      const known = fileMs.get(file);
      if (known !== undefined) return known;
      const fresh = { ms: 0, tests: 0 };
      fileMs.set(file, fresh);
      return fresh;
    };
    runner.on(EVENT_RUN_BEGIN, () => {
      began = Date.now();
      loadMs = Math.round(performance.now());
    });
    // a file's wall time: its top-level suites from begin to end (their hooks included)
    runner.on(EVENT_SUITE_BEGIN, (suite: Mocha.Suite) => {
      if (suite.parent?.root === true) suiteBegan.set(suite, Date.now());
    });
    runner.on(EVENT_SUITE_END, (suite: Mocha.Suite) => {
      const at = suiteBegan.get(suite);
      if (at !== undefined) perFile(fileOf(suite)).ms += Date.now() - at;
    });
    runner.on(EVENT_TEST_END, (test: Mocha.Test) => {
      const file = fileOf(test);
      perFile(file).tests += 1;
      tests.push({ file, title: test.fullTitle(), ms: test.duration ?? 0 });
    });
    runner.on(EVENT_HOOK_BEGIN, (hook: Mocha.Hook) => {
      hookBegan.set(hook, Date.now());
    });
    runner.on(EVENT_HOOK_END, (hook: Mocha.Hook) => {
      const at = hookBegan.get(hook);
      hookBegan.delete(hook);
      if (at === undefined) return;
      const ms = Date.now() - at;
      // hooks that take no time are most of them: keep the table to the ones worth reading
      if (ms >= 50) hooks.push({ file: fileOf(hook), title: hook.fullTitle(), ms });
    });
    runner.once(EVENT_RUN_END, () => {
      const byMs = (a: { ms: number }, b: { ms: number }): number => b.ms - a.ms;
      const d: Durations = {
        loadMs,
        totalMs: Date.now() - began,
        files: [...fileMs].map(([file, f]) => ({ file, ...f })).sort(byMs),
        tests: tests.sort(byMs),
        hooks: hooks.sort(byMs),
      };
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(`${out}.json`, JSON.stringify(d));
      writeFileSync(`${out}.txt`, durationsTable(d));
    });
  }
}

export default DurationsReporter;
