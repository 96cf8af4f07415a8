import { expect } from 'chai';
import { SqliteGate } from '../../../actors/sql/sqlite-gate.js';

/** A statement sent to the gate as Database.submit sends it. */
function statement(gate: SqliteGate, run: () => void): void {
  if (gate.enter()) run();
  else gate.wait(run);
}

describe('sql SQLite gate', () => {
  it('a transaction waits for the statements running; statements sent meanwhile wait for it, in order', async () => {
    const gate = new SqliteGate();
    const events: string[] = [];
    statement(gate, () => events.push('s1 start'));
    let endTransaction: () => void = () => undefined;
    gate.transaction(() => {
      events.push('t start');
      return new Promise<void>((resolve) => (endTransaction = resolve));
    });
    statement(gate, () => events.push('s2 start'));
    expect(events).to.deep.equal(['s1 start']);
    gate.statementEnded();
    expect(events).to.deep.equal(['s1 start', 't start']);
    endTransaction();
    await new Promise((r) => setImmediate(r));
    expect(events).to.deep.equal(['s1 start', 't start', 's2 start']);
  });

  it('statements run at once while no transaction is waiting; two transactions run one after the other', async () => {
    const gate = new SqliteGate();
    const events: string[] = [];
    statement(gate, () => events.push('a'));
    statement(gate, () => events.push('b'));
    expect(events).to.deep.equal(['a', 'b']);
    gate.statementEnded();
    gate.statementEnded();
    const ends: Array<() => void> = [];
    for (const name of ['t1', 't2']) {
      gate.transaction(() => {
        events.push(name);
        return new Promise<void>((resolve) => ends.push(resolve));
      });
    }
    expect(events).to.deep.equal(['a', 'b', 't1']);
    ends[0]!();
    await new Promise((r) => setImmediate(r));
    expect(events).to.deep.equal(['a', 'b', 't1', 't2']);
  });

  it('a transaction that fails opens the gate too', async () => {
    const gate = new SqliteGate();
    const events: string[] = [];
    gate.transaction(() => Promise.reject(new Error('broken')));
    statement(gate, () => events.push('after'));
    await new Promise((r) => setImmediate(r));
    expect(events).to.deep.equal(['after']);
  });
});
