/**
 * The poller's mark (actors/sql/track-state.ts): the stored format with and without a claimed batch,
 * the format of earlier releases still read, and the batch key made of NAME, column and last value.
 */
import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { batchKey } from '../../../actors/sql/poller.js';
import { TrackState, decodeTrack, encodeTrack, sameTrack } from '../../../actors/sql/track-state.js';
import { tempDir } from '../../temp.js';

describe('sql poller mark (track state)', () => {
  it('round-trips a last value, a claimed batch, and both, each keeping its type', () => {
    const at = new Date('2026-11-27T10:00:00.000Z');
    for (const mark of [
      { last: 7 },
      { pending: 'b' },
      { last: at, pending: new Date(at.getTime() + 1000) },
      { last: 'a', pending: 'b' },
    ]) {
      expect(decodeTrack(encodeTrack('id', mark), 'id', 'x')).to.deep.equal({ mark });
    }
  });

  it('reads the format of earlier releases (a value, no pending) and refuses what it cannot use, with a note', () => {
    expect(
      decodeTrack('{"column":"id","type":"number","value":3,"savedAt":"2026-01-01T00:00:00Z"}', 'id', 'f'),
    ).to.deep.equal({ mark: { last: 3 } });
    expect(decodeTrack('{"column":"other","type":"number","value":3}', 'id', 'state file f')).to.deep.equal({
      note: "state file f tracks column 'other', not 'id'; starting from the beginning",
    });
    expect(decodeTrack('{"column":"id","type":"number","value":"3"}', 'id', 'f')).to.have.property('note');
    expect(
      decodeTrack('{"column":"id","type":"number","value":3,"pending":{"type":"date","value":"no date"}}', 'id', 'f'),
    ).to.have.property('note');
    expect(decodeTrack('{"column":"id"}', 'id', 'f')).to.have.property('note');
    expect(decodeTrack('not json', 'id', 'f')).to.deep.equal({ note: 'f is not JSON; starting from the beginning' });
  });

  it('a file: claim keeps the last value and adds the pending one; save clears it; a new process reads both', async () => {
    const file = join(tempDir('hn-track-'), 'state.json');
    const state = new TrackState(file, 'id');
    await state.save(2);
    await state.claim(5);
    expect(JSON.parse(readFileSync(file, 'utf8'))).to.deep.include({
      column: 'id',
      type: 'number',
      value: 2,
      pending: { type: 'number', value: 5 },
    });
    const reread = new TrackState(file, 'id');
    expect(reread.load()).to.equal(undefined);
    expect([reread.last, reread.pending]).to.deep.equal([2, 5]);
    await reread.save(5);
    expect(JSON.parse(readFileSync(file, 'utf8'))).to.not.have.property('pending');
    writeFileSync(file, '{');
    expect(new TrackState(file, 'id').load()).to.match(/is not JSON/);
  });

  it('compares values for equality only (dates by time), and makes a batch key a queue accepts', () => {
    expect(sameTrack(new Date(5), new Date(5))).to.equal(true);
    expect(sameTrack(5, 5)).to.equal(true);
    expect(sameTrack(5, '5')).to.equal(false);
    expect(sameTrack(undefined, undefined)).to.equal(false);
    expect(batchKey('events', 'id', 42)).to.equal('sql-poll:events:id:42');
    expect(batchKey('events', 'at', new Date(0))).to.equal('sql-poll:events:at:1970-01-01T00:00:00.000Z');
    // too long or not printable ASCII: its SHA-256, the same for the same value
    const long = batchKey('events', 'body', 'x'.repeat(300));
    expect(long).to.match(/^sql-poll:sha256:[0-9a-f]{64}$/);
    expect(batchKey('events', 'body', 'x'.repeat(300))).to.equal(long);
    expect(batchKey('events', 'name', 'zoë')).to.match(/^sql-poll:sha256:/);
  });
});
