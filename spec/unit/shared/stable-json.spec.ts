import { expect } from 'chai';
import { stableJson } from '../../../actors/shared/stable-json.js';

describe('actors/shared/stable-json', () => {
  it('writes a log line as winston did: keys sorted at every depth, bigint as a string, what JSON leaves out left out', () => {
    const line = {
      message: 'm',
      level: 'info',
      nested: { b: [1, undefined, NaN], a: new Date(0) },
      n: 10n,
      f: () => 1,
      u: undefined,
      [Symbol('s')]: 1,
      buf: Buffer.from('hi'),
      u8: new Uint8Array(11),
    };
    expect(stableJson(line)).to.equal(
      '{"buf":{"data":[104,105],"type":"Buffer"},"level":"info","message":"m","n":"10","nested":{"a":"1970-01-01T00:00:00.000Z","b":[1,null,null]},"u8":{"0":0,"1":0,"2":0,"3":0,"4":0,"5":0,"6":0,"7":0,"8":0,"9":0,"10":0}}',
    );
  });

  it('writes an object that contains itself as "[Circular]" instead of throwing; a value seen twice side by side is written twice', () => {
    const shared = { x: 1 };
    const a: Record<string, unknown> = { shared, again: shared };
    a.self = a;
    expect(stableJson(a)).to.equal('{"again":{"x":1},"self":"[Circular]","shared":{"x":1}}');
  });
});
