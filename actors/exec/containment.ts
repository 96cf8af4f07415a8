/**
 * Ending every process one command run started, wherever it went.
 *
 * A process-group kill misses a descendant that called setsid, and parent links miss one whose
 * parent already exited (it is reparented to init). So each run gets a cookie, an environment
 * variable with a random value that every descendant inherits through setsid, double forks and
 * exec; a process is the run's if it carries the cookie, is in the command's session or process
 * group, or descends from such a process (see runMembers). Ending a run is SIGTERM to every member,
 * re-scanning for late forks, then after the grace: freeze every member with SIGSTOP until a scan
 * finds no new one (a stopped process cannot fork), SIGKILL them all, and scan again until none is
 * left. Each signal goes to a pid only after its start time is checked again, so a recycled pid is
 * never hit.
 *
 * Not covered: a descendant that replaces its environment (env -i, or overwrites it in memory), AND
 * leaves the session and process group, AND whose parent exited before the node looked. A PID
 * namespace (unshare --pid --kill-child) or a cgroup (cgroup.kill) would close that gap, but both
 * need privileges a node rarely has, and under an unprivileged user namespace the command would
 * see itself as root and another /proc — a different command than the one configured. The cookie
 * needs nothing and works for any user. Where there is no /proc (not Linux), the process group
 * alone is signalled, as before.
 */
import { randomUUID } from 'node:crypto';
import type { ProcessEntry } from './processes.js';
import { environHas, readProcess, readProcessTable, runMembers, sharedScan } from './processes.js';

/** The environment variable that marks every process of a run. */
const RUN_COOKIE_VARIABLE = 'HIVENODE_EXEC_RUN';

/** Re-scans while the grace runs: late forks get their SIGTERM too, and an empty scan ends it early. */
const TERM_POLL_MS = 100;
/** Waits between SIGKILL rounds, while the kernel tears the processes down. */
const KILL_POLL_MS = 20;
/** SIGKILL rounds before giving up on processes that do not die (uninterruptible sleep, another user's). */
const KILL_ROUNDS = 250;
/** Scans while freezing: each stops the members the previous one missed. */
const FREEZE_SCANS = 20;

type Identity = Pick<ProcessEntry, 'pid' | 'startTime'>;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export class RunContainment {
  readonly cookie = randomUUID();
  private readonly cookieEntry = Buffer.from(`${RUN_COOKIE_VARIABLE}=${this.cookie}\0`);
  private readonly known = new Map<number, number>();
  private readonly termed = new Set<string>();
  private readonly refused = new Set<number>();
  private leader: number | undefined;
  private since: number | undefined;
  private ending: Promise<void> | undefined;
  private hurry = false;
  private wake: (() => void) | undefined;

  constructor(private readonly warn: (message: string) => void) {}

  /** The variable to add to the command's environment. */
  get environment(): Record<string, string> {
    return { [RUN_COOKIE_VARIABLE]: this.cookie };
  }

  /** Called right after spawn: the command is our unreaped child, so its pid is still its own. */
  attach(pid: number): void {
    this.leader = pid;
    this.since = readProcess(pid)?.startTime;
  }

  /** SIGTERM to everything of the run, SIGKILL after `graceMs`; resolves when nothing is left. Idempotent. */
  end(graceMs: number): Promise<void> {
    this.ending ??= this.run(graceMs);
    return this.ending;
  }

  /** Node shutdown: skips what is left of the grace and kills at once. */
  kill(): Promise<void> {
    this.hurry = true;
    this.wake?.();
    return this.end(0);
  }

  /** The same at process exit, where nothing asynchronous runs any more. */
  killSync(): void {
    this.hurry = true;
    for (let round = 0; round < KILL_ROUNDS; round++) {
      const steps = this.killRound();
      let step = steps.next();
      while (!step.done) step = steps.next(readProcessTable());
      if (!step.value) return;
      sleepSync(KILL_POLL_MS);
    }
  }

  private async run(graceMs: number): Promise<void> {
    const deadline = Date.now() + graceMs;
    while (!this.hurry) {
      const found = this.membersIn(await this.scan());
      if (found === undefined) {
        this.signalGroup('SIGTERM');
        await this.pause(deadline - Date.now());
        break;
      }
      if (found.length === 0) return;
      for (const p of found) {
        if (this.termed.has(`${p.pid}:${p.startTime}`)) continue;
        this.termed.add(`${p.pid}:${p.startTime}`);
        this.signal(p, 'SIGTERM');
      }
      if (Date.now() >= deadline) break;
      await this.pause(Math.min(TERM_POLL_MS, deadline - Date.now()));
    }
    for (let round = 0; round < KILL_ROUNDS; round++) {
      const steps = this.killRound();
      let step = steps.next();
      while (!step.done) step = steps.next(await this.scan());
      if (!step.value) return;
      await this.pause(KILL_POLL_MS);
    }
    const left = this.membersIn(readProcessTable()) ?? [];
    if (left.length > 0)
      this.warn(`processes of a command still run after SIGKILL: ${left.map((p) => p.pid).join(', ')}`);
  }

  /**
   * One SIGKILL round: freeze every member, then kill them all; false when nothing was left. It
   * yields for each fresh process table, so the async ending and the exit hook drive the same steps.
   */
  private *killRound(): Generator<void, boolean, ProcessEntry[] | undefined> {
    let found = this.membersIn(yield);
    if (found === undefined) {
      this.signalGroup('SIGKILL');
      return false;
    }
    if (found.length === 0) return false;
    const frozen = new Map<number, Identity>();
    for (let scan = 0; scan < FREEZE_SCANS; scan++) {
      const fresh = found.filter((p) => !frozen.has(p.pid));
      if (fresh.length === 0) break;
      for (const p of fresh) {
        frozen.set(p.pid, p);
        this.signal(p, 'SIGSTOP');
      }
      found = this.membersIn(yield) ?? [];
    }
    for (const p of frozen.values()) this.signal(p, 'SIGKILL');
    return true;
  }

  /** A shared scan; every process that started since the leader read afresh (without a leader, every process). */
  private scan(): Promise<ProcessEntry[] | undefined> {
    return sharedScan(this.since ?? -Infinity);
  }

  /** The run's live processes in `table`, remembered for later scans; undefined without /proc. */
  private membersIn(table: ProcessEntry[] | undefined): ProcessEntry[] | undefined {
    if (this.leader === undefined || this.since === undefined || table === undefined) return undefined;
    const found = runMembers(table, { leader: this.leader, since: this.since, known: this.known }, (pid) =>
      environHas(pid, this.cookieEntry),
    ).filter((p) => !this.refused.has(p.pid));
    for (const p of found) this.known.set(p.pid, p.startTime);
    return found;
  }

  private signal(p: Identity, signal: NodeJS.Signals): void {
    // checked again right before the signal: the process may have ended and its pid been reused
    if (readProcess(p.pid)?.startTime !== p.startTime) return;
    try {
      process.kill(p.pid, signal);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EPERM') return; // ended meanwhile
      // a setuid program now runs as another user: the node may not signal it, so it stops looking
      this.refused.add(p.pid);
      this.warn(`may not signal process ${p.pid} of a command (it runs as another user); it is left running`);
    }
  }

  private signalGroup(signal: NodeJS.Signals): void {
    if (this.leader === undefined) return;
    try {
      process.kill(-this.leader, signal);
    } catch {
      // the group is already gone
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
