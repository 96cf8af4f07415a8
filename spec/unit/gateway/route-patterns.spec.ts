import { expect } from 'chai';
import { parsePatternTable } from '../../../actors/gateway/route-patterns.js';
import { parseRoutes } from '../../../actors/gateway/routes.js';

const table = (text: string) => parsePatternTable(text, 'pattern=value', (raw) => raw);
const matched = (text: string, cls: string, op: string): string | undefined => table(text).match(cls, op)?.pattern;

describe('gateway route patterns (shared by Routes and Access)', () => {
  it('the most specific entry wins whatever the order: class/operation, then class (or class/*), then *', () => {
    for (const text of ['*=a;sql=b;sql/select=c', 'sql/select=c;sql=b;*=a', 'sql=b;*=a;sql/select=c']) {
      expect(matched(text, 'sql', 'select'), text).to.equal('sql/select');
      expect(matched(text, 'sql', 'insert'), text).to.equal('sql');
      expect(matched(text, 'queue', 'add'), text).to.equal('*');
    }
    expect(matched('cmd/*=a;*=b', 'cmd', 'run')).to.equal('cmd/*');
    expect(matched('cmd/*=a;*=b', 'cmdx', 'run')).to.equal('*');
  });

  it('matches class and operation without case; no entry and no * match nothing', () => {
    expect(matched('SQL/Select=a', 'sql', 'SELECT')).to.equal('SQL/Select');
    expect(matched('sql/select=a', 'sql', 'insert')).to.equal(undefined);
    expect(matched('', 'sql', 'insert')).to.equal(undefined);
  });

  it("a class or operation literally named '*' gets no wildcard meaning", () => {
    expect(matched('sql/select=a', '*', 'select')).to.equal(undefined);
    expect(matched('sql/select=a', 'sql', '*')).to.equal(undefined);
    expect(matched('sql=a', '*', '*')).to.equal(undefined);
  });

  it('a route holding a slash cannot be taken for another route', () => {
    // class 'sql/select' with operation 'x' is not sql/select (nor sql)
    expect(matched('sql/select=a;sql=b', 'sql/select', 'x')).to.equal(undefined);
    expect(matched('sql/select=a;sql=b', 'sql', 'select/x')).to.equal('sql');
  });

  it('refuses malformed entries and patterns given twice, naming the entry', () => {
    const bad: Array<[string, RegExp]> = [
      ['sql', /entry 'sql' is not of the form pattern=value/],
      ['*/select=a', /entry '\*\/select=a' is not of the form/],
      ['sql/select/x=a', /entry 'sql\/select\/x=a' is not of the form/],
      ['sq l=a', /entry 'sq l=a'/],
      ['sql=a;sql/*=b', /entry 'sql\/\*=b': pattern 'sql\/\*' is given twice \('sql' and 'sql\/\*' are the same\)/],
      ['*=a;*=b', /entry '\*=b': pattern '\*' is given twice/],
      ['a/b=1;A/B=2', /entry 'A\/B=2': pattern 'A\/B' is given twice/],
    ];
    for (const [text, message] of bad) expect(() => table(text), text).to.throw(message);
  });

  it('Routes keeps its form and validates channels; a channel-less entry is refused', () => {
    const routes = parseRoutes('sql/select=sqlsel; sql=sqlall;cmd=exec1');
    expect(routes.channelFor('SQL', 'select', 'main')).to.equal('sqlsel');
    expect(routes.channelFor('sql', 'insert', 'main')).to.equal('sqlall');
    expect(routes.channelFor('queue', 'x', 'main')).to.equal('main');
    expect(parseRoutes('*=q').channelFor('any', 'x', 'main')).to.equal('q');
    expect(() => parseRoutes('sql=')).to.throw(/entry 'sql=': channel '' is not valid/);
    expect(() => parseRoutes('sql=a b')).to.throw(/entry 'sql=a b': channel 'a b' is not valid/);
  });
});
