import { expect } from 'chai';
import { addUserToGroups, checkGroupName, parseGroups } from '../../../actors/auth/groups.js';

const membership = (text: string): Record<string, string[]> => {
  const g = parseGroups(text, 'g');
  return Object.fromEntries([...g.ofUser].map(([u, s]) => [u, [...s].sort()]));
};

describe('gateway groups file (Apache AuthGroupFile format)', () => {
  it('reads group lines, skips comments and blank lines, merges a group given on several lines', () => {
    const text =
      '# groups\n\nadmins: alice\nops:  bob   alice\r\n  # indented comment\nadmins: carol\nempty:\nreaders:dave\n';
    expect(membership(text)).to.deep.equal({
      alice: ['admins', 'ops'],
      bob: ['ops'],
      carol: ['admins'],
      dave: ['readers'],
    });
    expect([...parseGroups(text, 'g').names].sort()).to.deep.equal(['admins', 'empty', 'ops', 'readers']);
  });

  it('names are case-sensitive, like the users file', () => {
    expect(membership('Ops: Alice')).to.deep.equal({ Alice: ['Ops'] });
  });

  it('refuses a bad line naming the file and the line number', () => {
    const bad: Array<[string, RegExp]> = [
      ['ok: a\njust words\n', /^groups file \/etc\/g line 2: expected 'group: user1 user2 …'$/],
      [': alice', /line 1: expected/],
      ['a b: alice', /line 1: expected/],
      ['ops: alice\n\n*: bob', /line 3: '\*' is not a group name/],
      ['ops: alice admins:bob', /line 1: user name 'admins:bob' contains ':'/],
    ];
    for (const [text, message] of bad) expect(() => parseGroups(text, '/etc/g'), text).to.throw(message);
  });

  it('adds a user to groups: to the first line of a group it names, else a new line; other lines and comments intact', () => {
    const text = '# the gateway groups\nops: bob\n\n# admins below\nadmins: carol   \nops: dave\n';
    const out = addUserToGroups(text, 'alice', ['ops', 'admins', 'readers', 'ops'], 'g');
    expect(out).to.equal(
      '# the gateway groups\nops: bob alice\n\n# admins below\nadmins: carol alice\nops: dave\nreaders: alice\n',
    );
    expect(membership(out).alice).to.deep.equal(['admins', 'ops', 'readers']);
    // already a member (on any line of the group): nothing changes
    expect(addUserToGroups(out, 'dave', ['ops'], 'g')).to.equal(out);
    expect(addUserToGroups('', 'alice', ['ops'], 'g')).to.equal('ops: alice\n');
    expect(addUserToGroups('empty:', 'alice', ['empty'], 'g')).to.equal('empty: alice\n');
    expect(() => addUserToGroups('broken line', 'alice', ['ops'], 'g')).to.throw(/groups file g line 1/);
  });

  it('checks group names given on the command line', () => {
    expect(checkGroupName('ops-1.x')).to.equal('ops-1.x');
    for (const bad of ['', 'a b', 'a:b', '#a', '*']) expect(() => checkGroupName(bad), bad).to.throw(/is not valid/);
  });
});
