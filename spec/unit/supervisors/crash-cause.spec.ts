import { expect } from 'chai';
import { crashCause, crashTrace } from '../../../supervisors/crash-cause.js';
import { Journal, JournalEvent } from '../../../supervisors/journal.js';

describe('crash cause and the journal mask', () => {
  it('names the hive message a crash happened on, without the values of credential-like fields', () => {
    const delivery = {
      mode: 'call',
      channel: 'echo',
      message: {
        Class: 'c',
        Operation: 'o',
        Control: { key: ['k1'] },
        Data: { item: ['a', 'b'], api_key: ['xyz'], Password: ['p'] },
      },
    };
    expect(crashCause({ type: 'delivery', delivery })).to.equal(
      "call on 'echo': c/o Control {key=k1} Data {item=a,b; api_key=***; Password=***}",
    );
    expect(crashCause({ type: 'tick' })).to.equal("actor message 'tick'");
    expect(crashCause(42)).to.equal('actor message of type number');
    expect(crashCause(undefined)).to.equal(undefined);
    expect(
      crashCause({
        type: 'delivery',
        delivery: { ...delivery, message: { ...delivery.message, Data: { big: ['x'.repeat(2000)] } } },
      })!.length,
    ).to.equal(600);
  });

  it('takes the trace of the message a crash happened on from its traceparent (none when absent or not a trace id)', () => {
    const on = (traceparent?: string): unknown => ({
      type: 'delivery',
      delivery: {
        mode: 'call',
        channel: 'e',
        message: {
          Class: 'c',
          Operation: 'o',
          Control: traceparent === undefined ? {} : { traceparent: [traceparent] },
          Data: {},
        },
      },
    });
    expect(crashTrace(on('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'))).to.equal(
      '4bf92f3577b34da6a3ce929d0e0e4736',
    );
    expect(crashTrace(on())).to.equal(undefined);
    expect(
      crashTrace(on('00-00000000000000000000000000000000-00f067aa0ba902b7-01')),
      'an all-zero id is no trace',
    ).to.equal(undefined);
    expect(crashTrace(on('00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01')), 'upper case is invalid').to.equal(
      undefined,
    );
    expect(crashTrace({ type: 'tick' })).to.equal(undefined);
  });

  it('masks error messages and causes with the mask it is given, and leaves other entries alone', () => {
    const journal = new Journal(10, { mask: (t) => t.split('s3cret').join('***') });
    journal.record({
      event: JournalEvent.Crash,
      path: '/node/x',
      error: { class: 'E', message: 'login s3cret refused' },
      cause: "call on 'x': Data {v=s3cret}",
    });
    journal.record({ event: JournalEvent.Start, path: '/node/x' });
    const [crash, start] = journal.entries();
    expect(crash).to.deep.include({
      error: { class: 'E', message: 'login *** refused' },
      cause: "call on 'x': Data {v=***}",
    });
    expect(start).to.not.have.property('cause');
    expect(journal.totalsOf('/node/x').lastCrash?.message).to.equal('login *** refused');
  });
});
