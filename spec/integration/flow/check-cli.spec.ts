/** `hivenode flow check` and a node's start on a definition (README, Flows): one line naming the step. */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { flowDir } from './helpers.js';
import { HIVENODE_ARGS } from '../../support/hivenode-bin.js';

const run = (args: string[]) =>
  spawnSync(process.execPath, [...HIVENODE_ARGS, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: flowDir() },
    timeout: 30_000,
  });

describe('hivenode flow check', function () {
  this.timeout(60_000);
  const dir = flowDir();
  const good = join(dir, 'good.yaml');
  const bad = join(dir, 'bad.yaml');
  writeFileSync(
    good,
    'steps:\n  - name: insert\n    call: sql\n    catch: [{codes: [502], next: undo}]\n  - name: log\n    emit: syslog\n    end: true\n  - name: undo\n    call: sql\n',
  );
  writeFileSync(
    bad,
    'steps:\n  - name: insert\n    call: sql\n  - name: check\n    choice: [{when: "{{eq .Steps.insert.Code 202}}", next: insert}]\n',
  );

  it('prints a valid definition as a graph; exit 0', () => {
    const r = run(['flow', 'check', good]);
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout).to.equal(
      `${good}: valid, 3 steps\ninsert (start): call sql\n  --next--> log\n  --catch 502--> undo\nlog: emit syslog\n  --> (run succeeded)\nundo: call sql\n  --> (run succeeded)\n`,
    );
  });

  it('names the step and what is wrong in one line; exit 1', () => {
    const r = run(['flow', 'check', bad]);
    expect(r.status).to.equal(1);
    expect(r.stderr.trim().split('\n')).to.deep.equal([
      "hivenode: step 'insert': the loop 'insert' → 'check' → 'insert' has no wait step: a run would spin through it; add a wait step to the loop",
    ]);
    const missing = run(['flow', 'check', join(dir, 'nope.yaml')]);
    expect(missing.status).to.equal(1);
    expect(missing.stderr).to.contain('no such file');
  });

  it('a node refuses to start on an invalid definition with one line naming the step; exit 2', () => {
    const r = run(['flow', `-Definition=file://${bad}`, '-PersistPath=']);
    expect(r.status, r.stderr).to.equal(2);
    expect(r.stderr).not.to.contain('    at ');
    const lines = r.stderr.trim().split('\n');
    expect(lines).to.have.length(1);
    expect(lines[0]).to.contain("Definition: step 'insert': the loop");
  });

  it('Store jetstream on the embedded hive is refused at start in one line naming SERVERHOST', () => {
    const r = run(['flow', `-Definition=file://${good}`, '-Store=jetstream']);
    expect(r.status, r.stderr).to.equal(2);
    expect(r.stderr.trim().split('\n')).to.have.length(1);
    expect(r.stderr).to.contain(
      "Store jetstream keeps the flow's runs in the NATS hive's JetStream: give SERVERHOST a nats:// address",
    );
  });
});
