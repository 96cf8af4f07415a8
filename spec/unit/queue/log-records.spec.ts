import { expect } from 'chai';
import type { LoggedOp } from '../../../actors/queue/log-records.js';
import { LogState, encodeOp, packLines } from '../../../actors/queue/log-records.js';

const replay = (ops: LoggedOp[], errors: string[] = []): LogState => {
  const s = new LogState();
  s.apply(ops.map(encodeOp).join('\n'), (line, e) => errors.push(`${line}: ${e.message}`));
  return s;
};

describe('queue log records (Store jetstream)', () => {
  it('replays puts, removals, clear and meta into the live entries, by seq', () => {
    const doc = (k: string): string =>
      JSON.stringify({ key: k, message: { Data: { text: ['tab\there, newline\n, quote "'] } } });
    const s = replay([
      { type: 'put', key: 'b', seq: 2, state: 'waiting', dueAt: 0, doc: doc('b') },
      { type: 'put', key: 'a', seq: 1, state: 'scheduled', dueAt: 99, doc: doc('a') },
      { type: 'put', key: 'c', seq: 3, state: 'waiting', dueAt: 0, doc: doc('c') },
      { type: 'remove', key: 'c' },
      { type: 'put', key: 'b', seq: 4, state: 'retrying', dueAt: 7, doc: doc('b') },
      { type: 'meta', name: 'paused', value: 'true' },
    ]);
    expect(s.entriesBySeq().map((r) => [r.key, r.seq, r.state, r.dueAt])).to.deep.equal([
      ['a', 1, 'scheduled', 99],
      ['b', 4, 'retrying', 7],
    ]);
    expect(JSON.parse(s.entriesBySeq()[0]!.doc)).to.deep.equal(JSON.parse(doc('a')));
    expect(s.meta.get('paused')).to.equal('true');
    s.apply(encodeOp({ type: 'clear' }), () => undefined);
    expect(s.entries.size).to.equal(0);
  });

  it('keeps idempotency keys until forgotten, and schedules by name', () => {
    const s = replay([
      { type: 'seen', key: 'k 1\t"x"', entryKey: 'e1', seenAt: 10 },
      { type: 'seen', key: 'k2', entryKey: 'e2', seenAt: 20 },
      { type: 'forget-seen', before: 10 },
      { type: 'put-schedule', name: 'nightly.job', doc: '{"cron":"0 0 * * *"}' },
      { type: 'put-schedule', name: 'other', doc: '{}' },
      { type: 'remove-schedule', name: 'other' },
    ]);
    expect(s.seen).to.deep.equal([{ key: 'k2', entryKey: 'e2', seenAt: 20 }]);
    expect(s.scheduleRows()).to.deep.equal([{ name: 'nightly.job', doc: '{"cron":"0 0 * * *"}' }]);
  });

  it('a state written as operations replays to the same state (a snapshot)', () => {
    const s = replay([
      { type: 'put', key: 'a', seq: 1, state: 'waiting', dueAt: 0, doc: '{"key":"a"}' },
      { type: 'meta', name: 'paused', value: 'false' },
      { type: 'seen', key: 'k', entryKey: 'a', seenAt: 5 },
      { type: 'put-schedule', name: 's', doc: '{}' },
    ]);
    const again = replay([...s.asOps()]);
    expect(again.entriesBySeq()).to.deep.equal(s.entriesBySeq());
    expect([...again.meta]).to.deep.equal([...s.meta]);
    expect(again.seen).to.deep.equal(s.seen);
    expect(again.scheduleRows()).to.deep.equal(s.scheduleRows());
  });

  it('reports an unreadable line and goes on with the next', () => {
    const errors: string[] = [];
    const s = new LogState();
    s.apply(
      ['Z\tnonsense', 'M\t{bad json', encodeOp({ type: 'meta', name: 'paused', value: 'true' })].join('\n'),
      (line, e) => errors.push(`${line}: ${e.message}`),
    );
    expect(errors).to.have.length(2);
    expect(errors[0]).to.match(/unknown record line/);
    expect(s.meta.get('paused')).to.equal('true');
  });

  it('packs lines into records within the size, never splitting a line', () => {
    const lines = ['aaaa', 'bbbb', 'cccc', 'dddddddddddd'];
    expect([...packLines(lines, 10)]).to.deep.equal(['aaaa\nbbbb', 'cccc', 'dddddddddddd']);
    expect([...packLines([], 10)]).to.deep.equal([]);
  });
});
