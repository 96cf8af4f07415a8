import { spawn } from 'node:child_process';
import { expect } from 'chai';
import type { ProcessEntry } from '../../../actors/exec/processes.js';
import { parseStat, readProcess, runMembers, sharedScan } from '../../../actors/exec/processes.js';

const proc = (
  pid: number,
  ppid: number,
  sid: number,
  startTime: number,
  more: Partial<ProcessEntry> = {},
): ProcessEntry => ({ pid, ppid, pgid: sid, sid, startTime, zombie: false, ...more });

describe('exec: the processes of a run in /proc', () => {
  it('parses a stat line whose command name holds spaces and parentheses', () => {
    const line =
      '4242 (a) (b c)) S 17 4242 4200 34816 4242 4194304 96 0 0 0 0 0 0 0 20 0 1 0 987654 8892416 240 18446744073709551615';
    expect(parseStat(4242, line)).to.deep.equal({
      pid: 4242,
      ppid: 17,
      pgid: 4242,
      sid: 4200,
      startTime: 987654,
      zombie: false,
    });
    expect(parseStat(7, '7 (z) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0')?.zombie).to.equal(true);
    expect(parseStat(7, 'garbage')).to.equal(undefined);
  });

  it('reads this process: its start time identifies it', () => {
    const self = readProcess(process.pid);
    expect(self?.pid).to.equal(process.pid);
    expect(self?.ppid).to.equal(process.ppid);
    expect(self?.startTime).to.be.greaterThan(0);
  });

  it('takes the session, the group, the cookie, the known and their descendants; never older processes or zombies', () => {
    const leader = 100;
    const table = [
      proc(1, 0, 1, 0), // init
      proc(50, 1, 50, 10), // the node, older than the run
      proc(100, 50, 100, 500), // the command
      proc(101, 100, 100, 501), // in its session
      proc(102, 100, 102, 502, { pgid: 102 }), // setsid, parent still there
      proc(103, 1, 103, 503), // setsid and orphaned: the cookie finds it
      proc(104, 103, 104, 504), // its child, left the session and wiped its environment
      proc(105, 1, 105, 505), // orphaned, no cookie: known from an earlier scan
      proc(106, 1, 106, 506), // unrelated, started during the run
      proc(107, 1, 100, 400), // "in the session", but older than the command: a recycled pid, not ours
      proc(108, 100, 100, 508, { zombie: true }), // dead already
    ];
    const members = runMembers(table, { leader, since: 500, known: new Map([[105, 505]]) }, (pid) => pid === 103);
    expect(members.map((p) => p.pid).sort((a, b) => a - b)).to.deep.equal([100, 101, 102, 103, 104, 105]);
    // a pid known with another start time is a different process
    expect(
      runMembers(table, { leader, since: 500, known: new Map([[106, 999]]) }, () => false).map((p) => p.pid),
    ).to.not.include(106);
  });
  it('a scan takes a process from the one before only when it is older than every run asking, and reads the newer ones afresh', async () => {
    const child = spawn('sleep', ['5'], { stdio: 'ignore' });
    try {
      const childStart = readProcess(child.pid!)!.startTime;
      // a scan for a run that started after every process: each one may be taken again by the next
      const first = await sharedScan(Infinity);
      const second = await sharedScan(childStart);
      const pick = (table: typeof first, pid: number): ProcessEntry | undefined => table?.find((p) => p.pid === pid);
      // the node is older than the run: the same entry as before; the child is not: read again
      expect(pick(second, process.pid)).to.equal(pick(first, process.pid));
      expect(pick(second, child.pid!)).to.not.equal(pick(first, child.pid!));
      expect(pick(second, child.pid!)).to.deep.equal(pick(first, child.pid!));
      // without a run's start, every process is read afresh
      expect(pick(await sharedScan(-Infinity), process.pid)).to.not.equal(pick(second, process.pid));
    } finally {
      child.kill();
    }
  });
});
