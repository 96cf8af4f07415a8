/**
 * The `idempotency-key` control: which keys are accepted, which are refused (400 naming
 * the control), that the queue keeps the control to itself, and how an add is sorted into new
 * entries and duplicates within the window.
 */
import { expect } from 'chai';
import { passedControls } from '../../../actors/queue/command-parser.js';
import { DedupKeys, SeenKey } from '../../../actors/queue/dedup.js';
import { MAX_KEY_LENGTH, idempotencyKeyOf } from '../../../protocol/idempotency.js';
import { BadInputError } from '../../../protocol/errors.js';
import { makeMessage, mapOf } from '../../../protocol/message.js';

const refusal = (values: string[]): BadInputError => {
  try {
    idempotencyKeyOf(mapOf({ 'idempotency-key': values }));
  } catch (e) {
    expect(e).to.be.instanceOf(BadInputError);
    expect((e as BadInputError).code).to.equal(400);
    return e as BadInputError;
  }
  throw new Error(`${JSON.stringify(values)} was accepted`);
};
const keyed = (key?: string): ReturnType<typeof makeMessage> =>
  makeMessage({ Class: 'c', Operation: 'o', Control: mapOf(key === undefined ? {} : { 'idempotency-key': [key] }) });

describe('queue idempotency-key control', () => {
  it('no control: no key; a printable key of up to 200 characters is taken as it is', () => {
    expect(idempotencyKeyOf(mapOf({}))).to.equal(undefined);
    expect(idempotencyKeyOf(mapOf({ 'idempotency-key': ['order-42'] }))).to.equal('order-42');
    expect(idempotencyKeyOf(mapOf({ 'idempotency-key': ['a b~!"\'{}'] }))).to.equal('a b~!"\'{}');
    expect(idempotencyKeyOf(mapOf({ 'idempotency-key': ['k'.repeat(MAX_KEY_LENGTH)] }))).to.have.length(200);
  });

  it('an empty, overlong, unprintable or repeated key is refused with 400 naming the control', () => {
    expect(refusal(['']).message).to.match(
      /^control idempotency-key is empty; give a key of 1 to 200 printable characters$/,
    );
    expect(refusal(['k'.repeat(201)]).message).to.equal(
      'control idempotency-key is 201 characters long; it may be at most 200',
    );
    expect(refusal(['a\nb']).message).to.equal('control idempotency-key may hold printable ASCII characters only');
    expect(refusal(['a\u0000b']).message).to.contain('printable ASCII');
    expect(refusal(['schlüssel']).message).to.contain('printable ASCII');
    expect(refusal(['a', 'b']).message).to.equal('control idempotency-key takes one value, got 2');
    expect(refusal([]).message).to.equal('control idempotency-key takes one value, got 0');
  });

  it("is the queue's own control: not passed on with the entry", () => {
    expect(passedControls(mapOf({ 'idempotency-key': ['k'], custom: ['x'] }))).to.deep.equal({ custom: ['x'] });
  });

  it('an add is sorted into new entries and duplicates of earlier keys and of keys earlier in the same add', () => {
    const dedup = new DedupKeys(1000);
    const first = dedup.plan([keyed('a'), keyed(), keyed('a'), keyed('b')], 0);
    expect(first.fresh.map((f) => f.key)).to.deep.equal(['a', undefined, 'b']);
    expect(first.order).to.deep.equal([0, 1, 'a', 2]);
    dedup.remember(first, ['e1', 'e2', 'e3'], 0);
    expect(dedup.firsts(first, ['e1', 'e2', 'e3'], 0).keys).to.deep.equal(['e1', 'e2', 'e1', 'e3']);
    const again = dedup.plan([keyed('b'), keyed('c')], 999);
    expect(again.order).to.deep.equal(['b', 0]);
    expect(dedup.lookup('a', 1000), 'expired at the end of the window').to.equal(undefined);
  });

  it('a bad key anywhere in an add refuses the whole add; a window of 0 ignores the control, bad or not', () => {
    expect(() => new DedupKeys(1000).plan([keyed('a'), keyed('')], 0)).to.throw(BadInputError);
    const off = new DedupKeys(0).plan([keyed('a'), keyed('a'), keyed('')], 0);
    expect(off.fresh).to.have.length(3);
    expect(off.fresh.every((f) => f.key === undefined)).to.equal(true);
  });

  it("a duplicate waits for its first entry's write: answered once it is committed, refused if it failed", async () => {
    const dedup = new DedupKeys(1000);
    const settledState = (p: Promise<void>): Promise<string> =>
      Promise.race([
        p.then(
          () => 'resolved',
          (e: Error) => `rejected: ${e.message}`,
        ),
        new Promise<string>((r) => setTimeout(() => r('pending'), 10)),
      ]);
    const [a] = dedup.remember(dedup.plan([keyed('a')], 0), ['e1'], 0);
    const dupOfA = dedup.lookup('a', 1)!;
    expect(dupOfA.entryKey).to.equal('e1');
    const waiting = dupOfA.durable;
    expect(await settledState(waiting), 'while the write is under way').to.equal('pending');
    a!.committed();
    expect(await settledState(waiting)).to.equal('resolved');
    expect(await settledState(dedup.lookup('a', 2)!.durable), 'a committed key').to.equal('resolved');

    const [b] = dedup.remember(dedup.plan([keyed('b')], 10), ['e2'], 10);
    const dupOfB = dedup.lookup('b', 11)!.durable;
    dedup.forget(b!);
    b!.failed(new Error('disk gone'));
    expect(await settledState(dupOfB)).to.equal('rejected: disk gone');
    expect(dedup.lookup('b', 12), 'taken back').to.equal(undefined);
    expect(dedup.plan([keyed('b')], 12).order, 'the next add with the key makes an entry').to.deep.equal([0]);
    expect(dedup.size).to.equal(1);
  });

  it('an expired key seen again makes a new entry and moves to the end of the order; a taken-back key leaves nothing behind', () => {
    const dedup = new DedupKeys(1000);
    dedup.remember(dedup.plan([keyed('x')], 0), ['x-1'], 0);
    dedup.remember(dedup.plan([keyed('y')], 500), ['y-1'], 500);
    const again = dedup.plan([keyed('x')], 1200);
    expect(again.fresh.map((f) => [f.key, f.expired])).to.deep.equal([['x', true]]);
    dedup.remember(again, ['x-2'], 1200);
    expect(dedup.lookup('x', 1300)?.entryKey).to.equal('x-2');
    const [z] = dedup.remember(dedup.plan([keyed('z')], 1300), ['z-1'], 1300);
    dedup.forget(z!);
    expect(dedup.size).to.equal(2);
    // y is first now: the sweep drops it, then stops at x (seen again at 1200)
    expect(dedup.sweep(1600)).to.deep.equal({ type: 'forget-seen', before: 600 });
    expect(dedup.size).to.equal(1);
    expect(dedup.lookup('x', 1600)?.entryKey).to.equal('x-2');
    expect(dedup.lookup('z', 1600)).to.equal(undefined);
    // keys after a sweep are found where they are
    dedup.remember(dedup.plan([keyed('w')], 1800), ['w-1'], 1800);
    expect(dedup.sweep(2700)).to.deep.equal({ type: 'forget-seen', before: 1700 });
    expect(dedup.size).to.equal(1);
    expect(dedup.lookup('w', 2700)?.entryKey).to.equal('w-1');
    expect(dedup.lookup('x', 2700)).to.equal(undefined);
  });

  it('a key committed after a restart of the actor is adopted by the new keys unless they hold it; the old keys cannot take it back there', () => {
    const before = new DedupKeys(1000);
    const [k, held] = before.remember(before.plan([keyed('k'), keyed('held')], 0), ['e-k', 'e-held-old'], 0);
    const after = new DedupKeys(1000);
    after.load([{ key: 'held', entryKey: 'e-held', seenAt: 0 }]);
    after.adopt(k!);
    after.adopt(held!);
    k!.committed();
    expect(after.lookup('k', 1)?.entryKey).to.equal('e-k');
    expect(after.lookup('held', 1)?.entryKey, 'the loaded key stays').to.equal('e-held');
    after.forget(new SeenKey('k', 'e-k', 0, false));
    expect(after.lookup('k', 1)?.entryKey, 'not one of its own writes').to.equal('e-k');
  });

  it('the sweep drops expired keys (once it is due) and asks the store to drop them too', () => {
    const dedup = new DedupKeys(1000);
    const plan = dedup.plan([keyed('old')], 0);
    dedup.remember(plan, ['e1'], 0);
    dedup.remember(dedup.plan([keyed('new')], 900), ['e2'], 900);
    expect(dedup.sweep(500), 'not due yet').to.equal(undefined);
    expect(dedup.sweep(1200)).to.deep.equal({ type: 'forget-seen', before: 200 });
    expect(dedup.size).to.equal(1);
    expect(dedup.lookup('new', 1200)?.entryKey).to.equal('e2');
    expect(dedup.sweep(1500), 'not due again so soon').to.equal(undefined);
    expect(dedup.sweep(2300)).to.deep.equal({ type: 'forget-seen', before: 1300 });
    expect(dedup.size).to.equal(0);
    expect(dedup.sweep(3400), 'nothing left to drop').to.equal(undefined);
  });
});
