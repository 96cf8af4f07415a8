/**
 * Running one command without a shell (README, The exec service), bounded: the answer comes when the command
 * has exited and closed its output, or at the Timeout whatever still holds the output pipes (then
 * with the output so far); and nothing the command started outlives its run (see containment.ts):
 * at the Timeout, when the command ends, or at node shutdown every process it started gets SIGTERM
 * and SIGKILL after a grace. stdout and stderr are kept up to a cap each and the rest is drained and
 * discarded, so memory stays bounded whatever the command prints.
 */
import { spawn } from 'node:child_process';
import { RunContainment } from './containment.js';

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
  /** Killed by node shutdown before it ended. */
  stopped: boolean;
  /** Set when the command could not be started (ENOENT, EACCES, ...). */
  spawnError?: NodeJS.ErrnoException;
}

/** A command started by startCommand. */
export interface CommandRun {
  /** The answer: at the command's end, at the Timeout, or at stop(). */
  readonly outcome: Promise<CommandOutcome>;
  /** Settles once nothing the command started still runs (it may come after the outcome). */
  readonly ended: Promise<void>;
  /** Node shutdown: answers now and kills everything of the run without grace. */
  stop(): Promise<void>;
  /** The same at process exit, synchronously. */
  stopSync(): void;
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

export function startCommand(spec: CommandSpec, warn: (message: string) => void): CommandRun {
  const out = new CappedBuffer(spec.maxOutputBytes);
  const err = new CappedBuffer(spec.maxOutputBytes);
  const containment = new RunContainment(warn);
  let spawnError: NodeJS.ErrnoException | undefined;
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let resolveOutcome!: (o: CommandOutcome) => void;
  const outcome = new Promise<CommandOutcome>((resolve) => (resolveOutcome = resolve));
  let resolveEnded!: () => void;
  const ended = new Promise<void>((resolve) => (resolveEnded = resolve));
  // its own session and process group (detached), and the run's cookie in its environment
  const child = spawn(spec.command, spec.args, {
    shell: false,
    detached: true,
    env: { ...spec.env, ...containment.environment },
    cwd: spec.cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
    windowsHide: true,
  });
  if (child.pid !== undefined) containment.attach(child.pid);

  let settled = false;
  const settle = (how: 'ended' | 'timedOut' | 'stopped'): void => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    if (how !== 'ended') {
      // a descendant may hold the pipes open for as long as it lives: the answer does not wait for it
      child.stdout.destroy();
      child.stderr.destroy();
      child.stdin.destroy();
    }
    resolveOutcome({
      exitCode: exit?.code ?? null,
      signal: exit?.signal ?? null,
      stdout: out.text(),
      stderr: err.text(),
      truncated: out.truncated || err.truncated,
      timedOut: how === 'timedOut',
      stopped: how === 'stopped',
      ...(spawnError ? { spawnError } : {}),
    });
  };
  const finish = (graceMs: number): void => {
    if (child.pid === undefined) resolveEnded();
    else void containment.end(graceMs).then(resolveEnded, resolveEnded);
  };
  const timer = setTimeout(() => {
    settle('timedOut');
    finish(spec.killGraceMs);
  }, spec.timeoutMs);
  child.stdout.on('data', (c: Buffer) => out.add(c));
  child.stderr.on('data', (c: Buffer) => err.add(c));
  child.stdin.on('error', () => undefined); // a command that does not read its input closes the pipe early
  child.stdin.end(spec.stdin ?? '');
  child.on('error', (e: NodeJS.ErrnoException) => {
    spawnError = e;
  });
  child.on('exit', (code, signal) => {
    exit = { code, signal };
  });
  child.on('close', (code, signal) => {
    exit ??= { code, signal };
    settle('ended');
    // what the command left running (a daemon, a background job) ends with it
    finish(spec.killGraceMs);
  });
  return {
    outcome,
    ended,
    stop() {
      settle('stopped');
      void containment.kill().then(resolveEnded, resolveEnded);
      return ended;
    },
    stopSync() {
      settle('stopped');
      containment.killSync();
    },
  };
}
