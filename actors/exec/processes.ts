/**
 * The process table as Linux's /proc shows it, and which of its processes belong to one command run.
 * Reads are synchronous (a /proc file is generated in memory, and the node's exit hook must be able
 * to read it too), but a full scan reads a file per process: runs that ask at about the same time
 * share one (sharedScan).
 */
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';

export interface ProcessEntry {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  /** Clock ticks after boot: with the pid, the identity of a process (a pid is recycled, this pair is not). */
  startTime: number;
  /** Exited and not yet reaped: nothing left to kill. */
  zombie: boolean;
}

/** Parses /proc/<pid>/stat; the command name may hold spaces and parentheses, so fields start after the last ')'. */
export function parseStat(pid: number, text: string): ProcessEntry | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const f = text.slice(close + 2).split(' ');
  // f[0] is field 3 of proc(5): state, ppid, pgrp, session, ..., starttime (field 22)
  if (f.length < 20) return undefined;
  return {
    pid,
    ppid: Number(f[1]),
    pgid: Number(f[2]),
    sid: Number(f[3]),
    startTime: Number(f[19]),
    zombie: f[0] === 'Z' || f[0] === 'X',
  };
}

/** One buffer for every stat read: a stat line is a few hundred bytes (the command name at most 64). */
const statBuffer = Buffer.alloc(4096);

export function readProcess(pid: number): ProcessEntry | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(`/proc/${pid}/stat`, 'r');
    const n = readSync(fd, statBuffer, 0, statBuffer.length, 0);
    return parseStat(pid, statBuffer.toString('latin1', 0, n));
  } catch {
    return undefined; // gone, or not ours to see
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The pid of every process, or undefined where there is no /proc (not Linux). */
function processIds(): number[] | undefined {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const pids: number[] = [];
  for (const name of names) if (name.charCodeAt(0) >= 48 && name.charCodeAt(0) <= 57) pids.push(Number(name));
  return pids;
}

/** Every process, or undefined where there is no /proc (not Linux). */
export function readProcessTable(): ProcessEntry[] | undefined {
  const pids = processIds();
  if (pids === undefined) return undefined;
  const table: ProcessEntry[] = [];
  for (const pid of pids) {
    const entry = readProcess(pid);
    if (entry) table.push(entry);
  }
  return table;
}

/** Fewest milliseconds between two shared scans: bounds the node's time in /proc whatever the command rate. */
const SCAN_SPACING_MS = 10;

/**
 * How long a scan may take a process from an earlier scan instead of reading its stat again. Only
 * a process that started before every run asking for the scan is taken so, and no run can count
 * it (runMembers keeps only those started at or after the run's leader) unless its pid now names
 * another process: a pid comes back only after the kernel has handed out every other one, which
 * within 100 ms of a pid_max of at least 32,768 takes over 300,000 forks a second, more than any
 * kernel does (with a smaller pid_max every scan reads every process). Each run of a command ended
 * with a scan that read every process's stat (three system calls a process): with ~100 processes
 * that was a sixth of the node's CPU in a --cpu-prof of /bin/true runs at concurrency 1, and taking
 * the older ones again cut the CPU of a run from 3.4 to 2.1 ms (raw spawn: 1.7 ms).
 */
const REUSE_MS = 100;
const MIN_PID_MAX = 32_768;
let pidMax: number | undefined;
function cachingAllowed(): boolean {
  if (pidMax === undefined) {
    try {
      pidMax = Number(readFileSync('/proc/sys/kernel/pid_max', 'latin1'));
    } catch {
      pidMax = 0;
    }
  }
  return pidMax >= MIN_PID_MAX;
}

/** The processes of the last scans, each with when its stat was read. */
const seen = new Map<number, { entry: ProcessEntry; readAt: number }>();

/** readProcessTable, taking from earlier scans the processes started before `before` (see REUSE_MS). */
function scanTable(before: number): ProcessEntry[] | undefined {
  const pids = processIds();
  if (pids === undefined) return undefined;
  const now = Date.now();
  const caching = cachingAllowed();
  const table: ProcessEntry[] = [];
  const live = new Set<number>();
  for (const pid of pids) {
    live.add(pid);
    const earlier = caching ? seen.get(pid) : undefined;
    if (earlier !== undefined && earlier.entry.startTime < before && now - earlier.readAt < REUSE_MS) {
      table.push(earlier.entry);
      continue;
    }
    const entry = readProcess(pid);
    if (entry === undefined) continue;
    table.push(entry);
    // kept only while its stat stays fresh enough to be taken again
    if (earlier === undefined || now - earlier.readAt >= REUSE_MS) seen.set(pid, { entry, readAt: now });
  }
  for (const pid of seen.keys()) if (!live.has(pid)) seen.delete(pid);
  return table;
}

let nextScan: Promise<ProcessEntry[] | undefined> | undefined;
let lastScan = 0;
/** The earliest leader start of the runs sharing the next scan. */
let nextBefore = Infinity;

/**
 * A table read after this call, shared with every caller until the read starts: many commands
 * ending together cost one scan, and the scans at most one per SCAN_SPACING_MS. `since` is the
 * caller's run's leader start time: a process older than every caller's may come from an earlier
 * scan (see REUSE_MS); every other one is read afresh.
 */
export function sharedScan(since: number): Promise<ProcessEntry[] | undefined> {
  nextBefore = Math.min(nextBefore, since);
  nextScan ??= new Promise((resolve) => {
    setTimeout(
      () => {
        const before = nextBefore;
        nextScan = undefined;
        nextBefore = Infinity;
        lastScan = Date.now();
        resolve(scanTable(before));
      },
      Math.max(0, lastScan + SCAN_SPACING_MS - Date.now()),
    );
  });
  return nextScan;
}

/** Whether the process's initial environment holds `entry` ("NAME=value"); false where it cannot be read. */
export function environHas(pid: number, entry: Buffer): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`).includes(entry);
  } catch {
    return false; // gone, another user's, or not dumpable (ssh-agent): the other rules still apply
  }
}

export interface RunIdentity {
  /** The command's pid: it is the leader of its own session and process group. */
  leader: number;
  /** The leader's start time: every process of the run started at or after it. */
  since: number;
  /** Processes found earlier (pid -> start time): still members though they left every other trace. */
  known: ReadonlyMap<number, number>;
}

/**
 * The live processes of a run: those found before, those in the leader's session or process group,
 * those carrying the run's cookie in their environment, and every descendant of these by parent
 * links. Only processes started at or after the leader qualify, so the node and anything older
 * can never be taken for a member, whatever a recycled pid looks like.
 */
export function runMembers(
  table: readonly ProcessEntry[],
  run: RunIdentity,
  carriesCookie: (pid: number) => boolean,
): ProcessEntry[] {
  const candidates = table.filter((p) => !p.zombie && p.startTime >= run.since && p.pid > 1);
  const members = new Map<number, ProcessEntry>();
  for (const p of candidates) {
    if (run.known.get(p.pid) === p.startTime || p.sid === run.leader || p.pgid === run.leader || carriesCookie(p.pid))
      members.set(p.pid, p);
  }
  const children = new Map<number, ProcessEntry[]>();
  for (const p of candidates) {
    const list = children.get(p.ppid);
    if (list) list.push(p);
    else children.set(p.ppid, [p]);
  }
  const pending = [...members.values()];
  for (let p = pending.pop(); p; p = pending.pop()) {
    for (const child of children.get(p.pid) ?? []) {
      if (members.has(child.pid)) continue;
      members.set(child.pid, child);
      pending.push(child);
    }
  }
  return [...members.values()];
}
