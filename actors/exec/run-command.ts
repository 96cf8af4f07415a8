/**
 * Running one command without a shell (spec §4.4 rule 4), bounded: the command gets its own process
 * group, so a timeout kills it and everything it started (SIGTERM, then SIGKILL after a grace);
 * stdout and stderr are kept up to a cap each and the rest is drained and discarded, so memory stays
 * bounded whatever the command prints.
 */
import { spawn } from 'node:child_process';

export interface CommandSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string | undefined;
  stdin: string | undefined;
  timeoutMs: number;
  killGraceMs: number;
  maxOutputBytes: number;
}

export interface CommandOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  timedOut: boolean;
  /** Set when the command could not be started (ENOENT, EACCES, ...). */
  spawnError?: NodeJS.ErrnoException;
}

class CappedBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly cap: number) {}
  add(chunk: Buffer): void {
    if (this.size >= this.cap) {
      this.truncated = true;
      return;
    }
    const room = this.cap - this.size;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (kept.length < chunk.length) this.truncated = true;
    this.chunks.push(kept);
    this.size += kept.length;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

export function runCommand(spec: CommandSpec): Promise<CommandOutcome> {
  return new Promise((resolve) => {
    const out = new CappedBuffer(spec.maxOutputBytes);
    const err = new CappedBuffer(spec.maxOutputBytes);
    let timedOut = false;
    let spawnError: NodeJS.ErrnoException | undefined;
    const child = spawn(spec.command, spec.args, { shell: false, detached: true, env: spec.env, cwd: spec.cwd, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
    const killGroup = (signal: NodeJS.Signals): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // the group is already gone
      }
    };
    let graceTimer: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup('SIGTERM');
      graceTimer = setTimeout(() => killGroup('SIGKILL'), spec.killGraceMs);
    }, spec.timeoutMs);
    child.stdout.on('data', (c: Buffer) => out.add(c));
    child.stderr.on('data', (c: Buffer) => err.add(c));
    child.stdin.on('error', () => undefined); // a command that does not read its input closes the pipe early
    child.stdin.end(spec.stdin ?? '');
    child.on('error', (e: NodeJS.ErrnoException) => {
      spawnError = e;
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      // the leader is gone; anything it left behind in its group goes too, after a timeout at once
      if (timedOut) {
        killGroup('SIGKILL');
        clearTimeout(graceTimer);
      }
      resolve({ exitCode, signal, stdout: out.text(), stderr: err.text(), truncated: out.truncated || err.truncated, timedOut, ...(spawnError ? { spawnError } : {}) });
    });
  });
}
