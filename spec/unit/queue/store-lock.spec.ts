/**
 * The single-holder lock of a store: free, held here, held by a live process, stale (dead pid, pid
 * reused, earlier boot, an earlier run with this pid), held on another host, unreadable; released
 * by close and by a normal exit, left stale by SIGKILL; and takeovers raced by real processes, of
 * which exactly one may win.
 */
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { StoreLock, procStat } from '../../../actors/queue/store-lock.js';
import type { LockHolder } from '../../../protocol/errors.js';
import { ConfigError, StoreHeldError } from '../../../protocol/errors.js';
import { tempDir } from '../../temp.js';
import { until } from '../../support/wait.js';

const MODULE = new URL('../../../actors/queue/store-lock.ts', import.meta.url).pathname;

const holderOf = (file: string): LockHolder => JSON.parse(readFileSync(file, 'utf8')) as LockHolder;
const writeHolder = (file: string, h: Partial<LockHolder>): void =>
  writeFileSync(
    file,
    JSON.stringify({
      host: hostname(),
      started: new Date().toISOString(),
      nonce: `n-${Math.random().toString(36).slice(2)}`,
      ...h,
    }),
  );
const refusalOf = async (p: Promise<unknown>): Promise<StoreHeldError> => {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e, 'the lock was taken').to.be.instanceOf(StoreHeldError);
  return e as StoreHeldError;
};

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', '']);
  return r.pid!;
}

/** A process that keeps running until killed. */
function sleeper(): ChildProcess {
  return spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
}

/** Child processes that take the lock when told "go" (stdin), report, and hold it until told "release". */
const contender = (file: string): string => `
import { StoreLock } from '${MODULE}';
const lines = [];
let lock;
process.stdin.setEncoding('utf8');
process.stdin.on('data', async (chunk) => {
  for (const line of chunk.split('\\n')) {
    if (line === 'go') {
      try {
        lock = await StoreLock.acquire('${file}', 'the test store');
        console.log(JSON.stringify({ pid: process.pid, held: true }));
      } catch (e) {
        console.log(JSON.stringify({ pid: process.pid, held: false, refusal: e.message, name: e.name }));
      }
    } else if (line === 'release') {
      lock?.release();
      process.exit(0);
    } else if (line === 'exit') {
      process.exit(0);
    }
  }
});
console.log('ready');
`;

interface Contender {
  child: ChildProcess;
  lines: string[];
}

function startContender(file: string): Contender {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', contender(file)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  let rest = '';
  child.stdout!.on('data', (c: Buffer) => {
    const parts = (rest + c.toString()).split('\n');
    rest = parts.pop()!;
    lines.push(...parts);
  });
  return { child, lines };
}

const exited = (c: ChildProcess): Promise<void> =>
  c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise((r) => c.once('exit', () => r()));

describe('store lock (one holder per store)', function () {
  this.timeout(60_000);

  it('takes a free lock, names this process in it, refuses a second taker in this process, and frees it on release', async () => {
    const file = join(tempDir('hn-lock-'), 'queue.lock');
    const lock = await StoreLock.acquire(file, 'the test store');
    const h = holderOf(file);
    expect(h.pid).to.equal(process.pid);
    expect(h.host).to.equal(hostname());
    expect(Date.parse(h.started)).to.be.at.most(Date.now());
    const e = await refusalOf(StoreLock.acquire(file, 'the test store'));
    expect(e).to.be.instanceOf(ConfigError); // a start failure: exit code 2
    expect(e.message)
      .to.contain('the test store')
      .and.to.contain(`pid ${process.pid}`)
      .and.to.contain(`host ${hostname()}`)
      .and.to.contain('already open in this process');
    expect(e.message).not.to.contain('\n');
    lock.release();
    expect(existsSync(file)).to.equal(false);
    lock.release(); // a second release does nothing
    (await StoreLock.acquire(file, 'the test store')).release();
  });

  it('takes over a holder whose pid is dead on this host', async () => {
    const file = join(tempDir('hn-lock-'), 'queue.lock');
    writeHolder(file, { pid: deadPid() });
    const lock = await StoreLock.acquire(file, 'the test store');
    expect(holderOf(file).nonce).to.equal(lock.holder.nonce);
    lock.release();
  });

  it('refuses a live holder on this host, naming its pid and host and what to do', async () => {
    const file = join(tempDir('hn-lock-'), 'queue.lock');
    const other = sleeper();
    try {
      writeHolder(file, { pid: other.pid! });
      const before = readFileSync(file, 'utf8');
      const e = await refusalOf(StoreLock.acquire(file, 'the queue store /x/q'));
      expect(e.message).to.match(
        new RegExp(`^the queue store /x/q is in use by pid ${other.pid} on host ${hostname()} .*stop that node first`),
      );
      expect(e.holder?.pid).to.equal(other.pid);
      expect(readFileSync(file, 'utf8'), 'the lock is left alone').to.equal(before);
    } finally {
      other.kill('SIGKILL');
      await exited(other);
    }
  });

  it('takes over a live pid that is another process than the one that wrote the lock (pid reused), on Linux', async function () {
    const other = sleeper();
    try {
      const ticks = procStat(other.pid!)?.startTicks;
      if (ticks === undefined) this.skip(); // no /proc: pid reuse cannot be told
      const file = join(tempDir('hn-lock-'), 'queue.lock');
      writeHolder(file, { pid: other.pid!, startTicks: ticks! });
      await refusalOf(StoreLock.acquire(file, 'the test store'));
      writeHolder(file, { pid: other.pid!, startTicks: ticks! + 1 });
      (await StoreLock.acquire(file, 'the test store')).release();
      writeHolder(file, { pid: other.pid!, bootId: 'an-earlier-boot' });
      (await StoreLock.acquire(file, 'the test store')).release();
    } finally {
      other.kill('SIGKILL');
      await exited(other);
    }
  });

  it('takes over a holder that was killed but not yet reaped by its parent (a zombie), on Linux', async function () {
    // a short `sleep` runs in the background of a shell that then becomes a long `sleep`, which never
    // reaps it. The background child must outlive the exec: a shell reaps a finished job between two
    // commands, and a `true` done before the exec left no zombie (the test skipped now and then)
    const parent = spawn('sh', ['-c', 'sleep 0.3 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      let out = '';
      parent.stdout!.on('data', (c: Buffer) => (out += c.toString()));
      await until(() => /\d+\n/.test(out), { ms: 30_000, every: 20, what: 'the zombie pid' });
      const zombie = Number(out.trim());
      await until(() => procStat(zombie)?.state === 'Z' || procStat(zombie) === undefined, {
        ms: 5_000,
        every: 20,
        what: 'the zombie',
      });
      if (procStat(zombie) === undefined) this.skip(); // no /proc
      const file = join(tempDir('hn-lock-'), 'queue.lock');
      writeHolder(file, { pid: zombie });
      (await StoreLock.acquire(file, 'the test store')).release();
    } finally {
      parent.kill('SIGKILL');
      await exited(parent);
    }
  });

  it("takes over this process's own pid when this process does not hold it (an earlier run with the same pid)", async () => {
    const file = join(tempDir('hn-lock-'), 'queue.lock');
    writeHolder(file, { pid: process.pid });
    (await StoreLock.acquire(file, 'the test store')).release();
  });

  it('never takes over a holder on another host, and says how to remove it', async () => {
    const file = join(tempDir('hn-lock-'), 'queue.lock');
    writeHolder(file, { pid: deadPid(), host: 'elsewhere.example' });
    const e = await refusalOf(StoreLock.acquire(file, 'the test store'));
    expect(e.message).to.contain('host elsewhere.example').and.to.contain(`delete ${file}`);
    expect(holderOf(file).host).to.equal('elsewhere.example');
  });

  it('refuses an unreadable lock file, naming it', async () => {
    const file = join(tempDir('hn-lock-'), 'queue.lock');
    for (const text of [
      'garbage',
      '',
      JSON.stringify({ pid: 0, host: hostname(), started: '', nonce: 'n' }),
      JSON.stringify({ pid: deadPid(), host: hostname(), started: '', nonce: '../../elsewhere' }),
    ]) {
      writeFileSync(file, text);
      const e = await refusalOf(StoreLock.acquire(file, 'the test store'));
      expect(e.message).to.contain(file).and.to.contain('delete');
      expect(readFileSync(file, 'utf8')).to.equal(text);
    }
  });

  it('takes over when a taker died in the middle of its takeover (a stale takeover file)', async () => {
    const dir = tempDir('hn-lock-');
    const file = join(dir, 'queue.lock');
    writeHolder(file, { pid: deadPid(), nonce: 'stale' });
    writeHolder(`${file}.takeover-stale`, { pid: deadPid(), nonce: 'dead-taker' });
    const lock = await StoreLock.acquire(file, 'the test store');
    expect(holderOf(file).nonce).to.equal(lock.holder.nonce);
    expect(readdirSync(dir), 'no takeover or temporary file is left').to.deep.equal(['queue.lock']);
    lock.release();
  });

  it('two takeovers of one stale lock in this process: one wins, the other is refused', async () => {
    const file = join(tempDir('hn-lock-'), 'queue.lock');
    writeHolder(file, { pid: deadPid() });
    const results = await Promise.allSettled([
      StoreLock.acquire(file, 'the test store'),
      StoreLock.acquire(file, 'the test store'),
    ]);
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).to.have.length(1);
    expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).to.be.instanceOf(
      StoreHeldError,
    );
    (won[0] as PromiseFulfilledResult<StoreLock>).value.release();
  });

  it('processes racing to take over one stale lock: exactly one holds it, the others are refused naming it', async () => {
    const dir = tempDir('hn-lock-');
    const file = join(dir, 'queue.lock');
    for (let round = 0; round < 3; round++) {
      writeHolder(file, { pid: deadPid() });
      const racers = Array.from({ length: 4 }, () => startContender(file));
      try {
        await until(() => racers.every((r) => r.lines.includes('ready')), {
          ms: 30_000,
          every: 20,
          what: 'the racers to start',
        });
        for (const r of racers) r.child.stdin!.write('go\n');
        await until(() => racers.every((r) => r.lines.length >= 2), {
          ms: 30_000,
          every: 20,
          what: 'every racer to answer',
        });
        const answers = racers.map(
          (r) => JSON.parse(r.lines[1]!) as { pid: number; held: boolean; refusal?: string; name?: string },
        );
        const winners = answers.filter((a) => a.held);
        expect(winners, `round ${round}: ${JSON.stringify(answers)}`).to.have.length(1);
        expect(holderOf(file).pid).to.equal(winners[0]!.pid);
        for (const a of answers.filter((x) => !x.held)) {
          expect(a.name).to.equal('StoreHeldError');
          expect(a.refusal).to.contain(`pid ${winners[0]!.pid}`);
        }
        for (const r of racers) r.child.stdin!.write('release\n');
        await Promise.all(racers.map((r) => exited(r.child)));
        expect(readdirSync(dir), 'no lock, takeover or temporary file is left').to.deep.equal([]);
      } finally {
        for (const r of racers) r.child.kill('SIGKILL');
      }
    }
  });

  it('a normal exit releases the lock; a SIGKILL leaves it, and the next taker takes it over', async () => {
    const file = join(tempDir('hn-lock-'), 'queue.lock');
    const exiting = startContender(file);
    await until(() => exiting.lines.includes('ready'), { ms: 30_000, every: 20, what: 'the contender to start' });
    exiting.child.stdin!.write('go\n');
    await until(() => exiting.lines.length >= 2, { ms: 30_000, every: 20, what: 'the lock to be taken' });
    expect(holderOf(file).pid).to.equal(exiting.child.pid);
    exiting.child.stdin!.write('exit\n');
    await exited(exiting.child);
    expect(existsSync(file), 'released at exit').to.equal(false);

    const killed = startContender(file);
    await until(() => killed.lines.includes('ready'), { ms: 30_000, every: 20, what: 'the contender to start' });
    killed.child.stdin!.write('go\n');
    await until(() => killed.lines.length >= 2, { ms: 30_000, every: 20, what: 'the lock to be taken' });
    killed.child.kill('SIGKILL');
    await exited(killed.child);
    expect(holderOf(file).pid, 'left behind by SIGKILL').to.equal(killed.child.pid);
    const lock = await StoreLock.acquire(file, 'the test store');
    expect(holderOf(file).pid).to.equal(process.pid);
    lock.release();
  });
});
