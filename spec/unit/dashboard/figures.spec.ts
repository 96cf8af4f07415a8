import { expect } from 'chai';
import { figureTexts } from '../../../node/dashboard/figures.js';

describe('dashboard figures', () => {
  it('shows a SQL pool in words with its units, not as JSON', () => {
    expect(figureTexts({ pool: { size: 2, available: 1, using: 1, waiting: 0 } })).to.deep.equal([
      'pool 1 of 2 connections in use, 1 idle, 0 requests waiting',
    ]);
    expect(figureTexts({ pool: { size: 1, available: 0, using: 1, waiting: 1 } })).to.deep.equal([
      'pool 1 of 1 connection in use, 0 idle, 1 request waiting',
    ]);
    expect(figureTexts({ pool: {} })).to.deep.equal(['pool no connection open yet']);
  });

  it('shows plain figures as "name value", other nested figures as "name: a 1, b 2", and leaves the channel to its column', () => {
    const texts = figureTexts({
      channel: 'sqlsel',
      mode: 'poll',
      inFlight: 0,
      strict: true,
      lastError: undefined,
      poller: { polls: 12, emitted: 3, lastValue: '41', deep: { a: 1 } },
      ports: [514, 601],
    });
    expect(texts).to.deep.equal([
      'mode poll',
      'inFlight 0',
      'strict yes',
      'poller: polls 12, emitted 3, lastValue 41, deep (a 1)',
      'ports 514, 601',
    ]);
    expect(texts.join(' ')).to.not.match(/[{}"]/);
  });
});
