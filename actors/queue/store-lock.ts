/**
 * One holder per store (issue: two nodes opened one queue store and delivered an entry twice). A
 * lock file beside the store names its holder: pid, host, start time and a nonce of this holding.
 * Kept apart from the SQL code so any QueueStore (SQLite now, JetStream later) opens under it.
 *
 * - Taking a free lock is atomic: the holder is written and fsynced to a private file which is then
 *   hard-linked to the lock name; link fails if the name exists, and readers never see half a file.
 * - A holder on this host whose process is gone is stale and taken over. Takeovers of one stale
 *   holder are serialised by an exclusive "takeover" file named after that holder (taken the same
 *   way, recursively, should a taker itself die mid-takeover); under it the taker re-reads the lock
 *   and only if it still names the stale holder renames its own over it. So of two racing takers
 *   exactly one wins and the other then finds a live holder.
 * - A holder on another host is never taken over: its pid means nothing here.
 * - This process's own pid in a lock it does not hold is a previous run (containers start their node
 *   as the same pid each time), so it is stale; a lock this process holds refuses a second opener.
 * - Released on close and on process exit; a SIGKILLed holder leaves a stale lock for its restart.
 */
import { randomUUID } from 'node:crypto';
import { fsyncSync, closeSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { StoreHeldError } from '../../protocol/errors.js';
import type { LockHolder } from '../../protocol/errors.js';

/** How long a start waits for another process's takeover in progress before giving up. */
const TAKEOVER_WAIT_MS = 5_000;

/** Nonces of the lock files (and takeover files) this process holds or is taking right now. */
const heldHere = new Set<string>();
/** Lock files held by this process, removed at exit if still held. */
const releaseAtExit = new Map<string, string>();
let exitHookInstalled = false;

/** Linux: the kernel's id of this boot, so a lock written before a reboot is known stale. */
function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Linux: a process's state letter and its start time in clock ticks since boot; the start time tells
 * a reused pid from its first owner, and state Z (exited, not yet reaped) or X means it is gone.
 */
export function procStat(pid: number): { state: string; startTicks: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) is in parentheses and may hold spaces; state is field 3, starttime 22
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const startTicks = Number(fields[19]);
    return Number.isSafeInteger(startTicks) ? { state: fields[0]!, startTicks } : undefined;
  } catch {
    return undefined;
  }
}

function ownHolder(): LockHolder {
  const boot = bootId();
  const ticks = procStat(process.pid)?.startTicks;
  return {
    pid: process.pid,
    host: hostname(),
    started: new Date(Date.now() - Math.round(process.uptime() * 1000)).toISOString(),
    nonce: randomUUID(),
    ...(boot === undefined ? {} : { bootId: boot }),
    ...(ticks === undefined ? {} : { startTicks: ticks }),
  };
}

const NONCE = /^[A-Za-z0-9_-]{1,100}$/;

type Read = { kind: 'holder'; holder: LockHolder } | { kind: 'gone' } | { kind: 'unreadable'; reason: string };

function readHolder(file: string): Read {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'gone' };
    throw e;
  }
  try {
    const h = JSON.parse(text) as Partial<LockHolder>;
    // the nonce names a takeover file, so it must be a plain name; pid 0 or below would address process groups
    if (
      Number.isSafeInteger(h.pid) &&
      h.pid! > 0 &&
      typeof h.host === 'string' &&
      typeof h.started === 'string' &&
      typeof h.nonce === 'string' &&
      NONCE.test(h.nonce)
    )
      return { kind: 'holder', holder: h as LockHolder };
  } catch {
    // reported below
  }
  return { kind: 'unreadable', reason: text === '' ? 'empty' : 'not a lock this program wrote' };
}

/** Whether the holder's process still runs; a holder on another host always counts as running. */
export function holderAlive(h: LockHolder): boolean {
  if (h.host !== hostname()) return true;
  if (h.pid === process.pid) return heldHere.has(h.nonce);
  const boot = bootId();
  if (h.bootId !== undefined && boot !== undefined && h.bootId !== boot) return false;
  try {
    process.kill(h.pid, 0);
  } catch (e) {
    // EPERM: it exists but belongs to another user
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const stat = procStat(h.pid);
  if (stat === undefined) return true;
  return stat.state !== 'Z' && stat.state !== 'X' && (h.startTicks === undefined || stat.startTicks === h.startTicks);
}

/** The holder written (and fsynced) to a private file beside `file`, ready to be linked or renamed. */
function writeTemp(file: string, me: LockHolder): string {
  const temp = `${file}.${me.nonce}.tmp`;
  const fd = openSync(temp, 'w', 0o644);
  try {
    writeSync(fd, `${JSON.stringify(me)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return temp;
}

/** Creates `file` holding `me` unless it exists. */
function create(file: string, me: LockHolder): boolean {
  const temp = writeTemp(file, me);
  try {
    linkSync(temp, file);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  } finally {
    unlinkSync(temp);
  }
}

/** Removes `file` if it still names the holding `nonce` (a lock is only ever removed by its holder). */
function removeIfOurs(file: string, nonce: string): void {
  const r = readHolder(file);
  if (r.kind === 'holder' && r.holder.nonce === nonce) unlinkSync(file);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Takes `file` for `me`: resolves undefined once held, or with the live holder that keeps it.
 * A stale holder is replaced under the takeover file named after it, which is taken by this same
 * function (its own stale holder, if any, is replaced one level further down).
 */
async function take(file: string, me: LockHolder, deadline: number): Promise<LockHolder | undefined> {
  for (;;) {
    if (create(file, me)) return undefined;
    const read = readHolder(file);
    if (read.kind === 'gone') continue; // released meanwhile: try again
    if (read.kind === 'unreadable')
      throw new StoreHeldError(
        `the lock file ${file} is ${read.reason}: if no node uses this store, delete ${file} and start again`,
        file,
      );
    const stale = read.holder;
    if (holderAlive(stale)) return stale;
    const takeover = `${file}.takeover-${stale.nonce}`;
    const taker = await take(takeover, me, deadline);
    if (taker) {
      // another process is replacing the same stale holder: it is done in moments, then it holds the lock
      if (Date.now() > deadline)
        throw new StoreHeldError(
          `the lock file ${file} is being taken over by pid ${taker.pid} on host ${taker.host} and it did not finish: if no node uses this store, delete ${file} and ${takeover}, then start again`,
          file,
          taker,
        );
      await sleep(20);
      continue;
    }
    try {
      const again = readHolder(file);
      if (again.kind === 'holder' && again.holder.nonce === stale.nonce) {
        renameSync(writeTemp(file, me), file);
        return undefined;
      }
    } finally {
      removeIfOurs(takeover, me.nonce);
    }
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // a normal exit releases what close() did not (a SIGKILL cannot: its lock is taken over as stale)
  process.on('exit', () => {
    for (const [file, nonce] of releaseAtExit) {
      try {
        removeIfOurs(file, nonce);
      } catch {
        // nothing more can be done while exiting
      }
    }
  });
}

/** A held store lock. */
export class StoreLock {
  private released = false;

  private constructor(
    readonly file: string,
    readonly holder: LockHolder,
  ) {}

  /**
   * Takes the lock file `file` for the store `store` (named in the refusal), taking over a stale
   * holder; throws StoreHeldError naming the holder when the store is in use.
   */
  static async acquire(file: string, store: string): Promise<StoreLock> {
    const me = ownHolder();
    heldHere.add(me.nonce);
    let holder: LockHolder | undefined;
    try {
      holder = await take(file, me, Date.now() + TAKEOVER_WAIT_MS);
    } catch (e) {
      heldHere.delete(me.nonce);
      throw e;
    }
    if (holder) {
      heldHere.delete(me.nonce);
      throw refusal(file, store, holder);
    }
    installExitHook();
    releaseAtExit.set(file, me.nonce);
    return new StoreLock(file, me);
  }

  /** Removes the lock file (if it is still ours); later calls do nothing. */
  release(): void {
    if (this.released) return;
    this.released = true;
    releaseAtExit.delete(this.file);
    try {
      removeIfOurs(this.file, this.holder.nonce);
    } finally {
      heldHere.delete(this.holder.nonce);
    }
  }
}

/** The one-line refusal: where, who holds it, what to do. */
function refusal(file: string, store: string, h: LockHolder): StoreHeldError {
  const since = `since ${h.started}`;
  if (h.host !== hostname()) {
    return new StoreHeldError(
      `${store} is held by pid ${h.pid} on host ${h.host} (${since}), not this host: if that host no longer runs a node on this store, delete ${file} and start again`,
      file,
      h,
    );
  }
  if (h.pid === process.pid) {
    return new StoreHeldError(
      `${store} is already open in this process (pid ${h.pid} on host ${h.host}) by another service: give each its own PersistPath or NAME`,
      file,
      h,
    );
  }
  return new StoreHeldError(
    `${store} is in use by pid ${h.pid} on host ${h.host} (${since}; lock ${file}): stop that node first, or give this queue another PersistPath or NAME`,
    file,
    h,
  );
}
