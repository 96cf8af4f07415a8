import { expect } from 'chai';
import { copyJsonValue } from '../../../actors/interceptor/connect.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';

describe('interceptor value copy', () => {
  it('copies a message deeply: the interceptor cannot change the caller’s maps or lists', () => {
    const message = makeMessage({ Class: 'c', Data: mapOf({ id: ['1'], name: ['a', 'b'] }) });
    const copy = copyJsonValue(message) as typeof message;
    expect(copy).to.deep.equal({ Class: 'c', Operation: '', Control: {}, Data: { id: ['1'], name: ['a', 'b'] } });
    copy.Data.name!.push('changed');
    copy.Data.added = ['x'];
    expect(message.Data.name).to.deep.equal(['a', 'b']);
    expect(message.Data).to.not.have.property('added');
  });

  it('keeps a parsed "__proto__" key as data, never as the copy’s prototype', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "a": [1, null, "x"]}') as Record<string, unknown>;
    const copy = copyJsonValue(parsed) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).to.equal(Object.prototype);
    expect(Object.keys(copy)).to.deep.equal(['__proto__', 'a']);
    expect((copy as { polluted?: unknown }).polluted).to.equal(undefined);
    expect(copy.a).to.deep.equal([1, null, 'x']);
  });

  it('clones what is not plain JSON as structuredClone does (dates stay dates, and are copies)', () => {
    const when = new Date('2026-01-02T03:04:05Z');
    const copy = copyJsonValue({ when }) as { when: Date };
    expect(copy.when).to.be.instanceOf(Date);
    expect(copy.when).to.not.equal(when);
    expect(copy.when.getTime()).to.equal(when.getTime());
  });
});
