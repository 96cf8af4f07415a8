import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import { BadInputError, TooLargeError } from '../../../protocol/errors.js';
import {
  copyMap,
  emptyMap,
  mapOf,
  validateMessage,
  validateResult,
  validateValueMap,
  resultFromError,
  success,
} from '../../../protocol/message.js';
import { decodeMessage } from '../../../protocol/wire.js';

const codeOf = (f: () => unknown): number | string => {
  try {
    f();
    return 'no error';
  } catch (e) {
    return (e as { code?: number }).code ?? 'untyped';
  }
};
const messageOf = (f: () => unknown): string => {
  try {
    f();
    return '';
  } catch (e) {
    return (e as Error).message;
  }
};

describe('protocol/message', () => {
  it('copies a value map: a new value map holding the same values', () => {
    const map = mapOf({ a: ['1'], b: ['2', '3'] });
    const copy = copyMap(map);
    expect(copy).to.not.equal(map);
    expect(copy instanceof Object, 'Object.prototype on the chain').to.equal(false);
    expect({ ...copy }).to.deep.equal({ a: ['1'], b: ['2', '3'] });
    copy.c = ['4'];
    expect(Object.hasOwn(map, 'c')).to.equal(false);
  });

  it('gives every value map one shared, frozen, empty prototype with a null prototype: keys such as toString are plain data', () => {
    const a = emptyMap();
    const b = validateValueMap({ toString: ['x'] }, 'w');
    const proto = Object.getPrototypeOf(a) as object;
    expect(Object.getPrototypeOf(b)).to.equal(proto);
    expect(Object.getPrototypeOf(proto)).to.equal(null);
    expect(Object.isFrozen(proto)).to.equal(true);
    expect(Object.getOwnPropertyNames(proto)).to.deep.equal([]);
    expect('toString' in a).to.equal(false);
    expect(a.hasOwnProperty).to.equal(undefined);
    expect(b.toString).to.deep.equal(['x']);
    // no code can give every map a key through the shared prototype
    expect(() => Object.defineProperty(proto, 'x', { value: ['y'] })).to.throw(TypeError);
    // "__proto__" assigned to a map is its own key, not its prototype
    a['__proto__'] = ['p'];
    expect(Object.getPrototypeOf(a)).to.equal(proto);
    expect(Object.keys(a)).to.deep.equal(['__proto__']);
  });

  it('makes value maps that V8 keeps as fast objects, not dictionaries (Object.create(null) gives a dictionary)', function () {
    this.timeout(20_000);
    const module = new URL('../../../protocol/message.ts', import.meta.url).href;
    const script = `import { emptyMap, mapOf, validateMessage } from ${JSON.stringify(module)};
const m = emptyMap(); m.a = ['1']; m.b = ['2'];
const v = validateMessage({ Class: 'c', Data: { id: ['42'], name: ['x'] }, Control: { channel: ['q'] } });
console.log(JSON.stringify([%HasFastProperties(m), %HasFastProperties(mapOf({ a: ['1'] })), %HasFastProperties(v.Data), %HasFastProperties(v.Control)]));`;
    const out = execFileSync(
      process.execPath,
      ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', script],
      { encoding: 'utf8' },
    );
    expect(JSON.parse(out)).to.deep.equal([true, true, true, true]);
  });

  it('accepts a well-formed message and fills missing parts', () => {
    const m = validateMessage({ Class: 'sql', Data: { id: ['1', '2'] } });
    expect(m.Class).to.equal('sql');
    expect(m.Operation).to.equal('');
    expect({ ...m.Data }).to.deep.equal({ id: ['1', '2'] });
    expect(Object.keys(m.Control)).to.have.length(0);
    expect(m.Data instanceof Object, 'Object.prototype on the chain').to.equal(false);
  });

  it('names the field that is wrong', () => {
    expect(messageOf(() => validateMessage({ Data: { id: [1] } }, 'body'))).to.equal(
      'body.Data.id[0] must be a string, got number',
    );
    expect(messageOf(() => validateMessage({ Data: { id: 'x' } }, 'body'))).to.equal(
      'body.Data.id must be a list of strings, got string',
    );
    expect(messageOf(() => validateMessage({ Class: 5 }, 'body'))).to.equal('body.Class must be a string, got number');
    expect(messageOf(() => validateMessage([], 'body'))).to.contain('body must be an object');
    expect(codeOf(() => validateMessage({ Control: { a: [null] } }))).to.equal(400);
  });

  it('refuses prototype keys anywhere', () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const data = JSON.parse(`{"Data": {"${key}": ["x"]}}`) as unknown;
      expect(() => validateMessage(data)).to.throw(BadInputError, key);
      const top = JSON.parse(`{"${key}": {}}`) as unknown;
      expect(() => validateMessage(top)).to.throw(BadInputError, key);
    }
    const m = validateMessage({ Data: { toString: ['plain data'] } });
    expect(m.Data.toString).to.deep.equal(['plain data']);
  });

  it('enforces size limits with 413', () => {
    const limits = { maxKeys: 3, maxValues: 2, maxKeyLength: 5, maxChars: 20 };
    expect(codeOf(() => validateMessage({ Data: { a: [], b: [], c: [], d: [] } }, 'm', limits))).to.equal(413);
    expect(codeOf(() => validateMessage({ Data: { a: ['1', '2', '3'] } }, 'm', limits))).to.equal(413);
    expect(codeOf(() => validateMessage({ Data: { abcdef: [] } }, 'm', limits))).to.equal(413);
    expect(codeOf(() => validateMessage({ Data: { a: ['x'.repeat(30)] } }, 'm', limits))).to.equal(413);
    expect(() => validateMessage({ Data: { a: ['x'.repeat(30)] } }, 'm', limits)).to.throw(TooLargeError);
  });

  it('validates results, accepting Status for Code', () => {
    expect(validateResult({ Status: 201, Message: 'made' }).Code).to.equal(201);
    expect(validateResult({ Code: 200, Data: { a: ['b'] }, List: [{ x: 1 }] }).List).to.deep.equal([{ x: 1 }]);
    expect(messageOf(() => validateResult({ Code: 'ok' }))).to.contain('result.Code must be an integer');
    expect(messageOf(() => validateResult({ Code: 200, List: {} }))).to.contain('List must be a list or null');
  });

  it('refuses C0, DEL and C1 control characters in Class and Operation with 400 naming the part; printable text passes', () => {
    for (const c of ['\u0000', '\t', '\n', '\r', '\u001f', '\u007f', '\u0080', '\u009f']) {
      expect(
        codeOf(() => validateMessage({ Class: `a${c}b` }, 'body')),
        JSON.stringify(c),
      ).to.equal(400);
      expect(
        messageOf(() => validateMessage({ Operation: `a${c}b` }, 'body')),
        JSON.stringify(c),
      ).to.match(/^body\.Operation 'a\\u00[0-9A-F]{2}b' contains the control character U\+00[0-9A-F]{2};/);
    }
    expect(messageOf(() => decodeMessage('{"Class":"ech\\u0000o"}', "message on 'x'"))).to.equal(
      String.raw`message on 'x'.Class 'ech\u0000o' contains the control character U+0000; Class and Operation take printable characters only`,
    );
    // the neighbours of the refused ranges, and non-ASCII letters, are names like any other
    expect(validateMessage({ Class: ' ~\u00a0é€😀', Operation: 'op' }).Class).to.equal(' ~\u00a0é€😀');
    // control characters in Data values are data (a multi-line text), not refused
    expect(validateMessage({ Data: { text: ['line 1\nline 2'] } }).Data.text).to.deep.equal(['line 1\nline 2']);
  });

  it('reports bad JSON with the parser reason', () => {
    expect(messageOf(() => decodeMessage('{"Class":', 'body'))).to.match(/^body is not valid JSON: /);
  });

  it('builds success and error results', () => {
    expect(success()).to.include({ Code: 200, Message: 'Success' });
    expect(resultFromError(new BadInputError('nope'))).to.include({ Code: 400, Message: 'nope' });
    expect(resultFromError(new Error('bug'))).to.include({ Code: 500, Message: 'bug' });
  });
});
