/**
 * Creates a directory and its missing parents, one level at a time. Not `mkdir(..., { recursive:
 * true })`: Node's recursive mkdir spins forever (100% CPU, deaf to SIGTERM) when a parent exists but
 * cannot hold children, as under /proc, where mkdir answers ENOENT and Node takes that for "create the
 * parent first" (nodejs/node: the loop is in its C++ code, Node 18 to 22). A directory that cannot be
 * made is a start failure: one line naming the parameter, the path, the cause and the fix.
 */
import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError } from '../../protocol/errors.js';

/** Makes `dir` (and its parents); `parameter` names the setting it came from, for the error. */
export function makeDirectory(dir: string, parameter: string): void {
  const target = resolve(dir);
  const missing: string[] = [];
  // walk up to the nearest part that exists, then create downwards: each step either works or fails once
  for (let at = target; !exists(at); at = dirname(at)) {
    missing.unshift(at);
    if (dirname(at) === at) break;
  }
  for (const part of missing) {
    try {
      mkdirSync(part);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' && isDirectory(part)) continue; // made meanwhile by someone else
      throw new ConfigError(
        `${parameter}: cannot create ${part} (${code ?? String(e)}) for the directory ${target}; give a directory this user can create and write`,
      );
    }
  }
  if (!isDirectory(target))
    throw new ConfigError(`${parameter}: ${target} exists and is not a directory; give a directory`);
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
