/**
 * `hivenode queue salvage <dir>` and `hivenode flow salvage <dir>` (README, The queue: "A damaged
 * store"): the same store format, so one command under two names. The directory is PersistPath/<NAME>
 * of the queue or flow; the store's lock is taken first, so a node holding the store refuses it.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { StoreLock } from '../actors/queue/store-lock.js';
import { STORE_FILE, checkStore, salvageReport, salvageStore } from '../actors/queue/salvage.js';
import { ConfigError, describeError } from '../protocol/errors.js';
import { exitOnConfigError } from './run-node.js';

export async function runSalvage(kind: 'queue' | 'flow', dirArg: string): Promise<void> {
  const dir = resolve(dirArg);
  let lock: StoreLock | undefined;
  try {
    if (!existsSync(join(dir, STORE_FILE)))
      throw new ConfigError(
        `${dir} holds no ${kind} store (${STORE_FILE}): give the directory PersistPath/<NAME> of the ${kind}`,
      );
    lock = await StoreLock.acquire(join(dir, 'queue.lock'), `the ${kind} store ${dir}`);
    const check = await checkStore(dir).catch((e: unknown) => describeError(e));
    if (check === 'ok') {
      console.log(`${join(dir, STORE_FILE)} passes its integrity check: nothing to salvage, nothing changed`);
      return;
    }
    console.log(`salvaging ${join(dir, STORE_FILE)} …`);
    const salvage = await salvageStore(dir, (line) => console.log(line));
    for (const line of salvageReport(salvage)) console.log(line);
  } catch (e) {
    if (e instanceof ConfigError) exitOnConfigError(e);
    // a salvage that failed midway (a full disk, an unreadable directory) removed what it had built
    console.error(
      `hivenode: the salvage of ${join(dir, STORE_FILE)} failed (${describeError(e).replace(/\s+/g, ' ')}); the store was left as it is`,
    );
    process.exitCode = 1;
  } finally {
    lock?.release();
  }
}
