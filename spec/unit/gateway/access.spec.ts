import { expect } from 'chai';
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Authorizer, namedGroups, openAccess, parseAccess } from '../../../actors/gateway/access.js';
import { parseGroups } from '../../../actors/auth/groups.js';
import { compileGatewayOptions } from '../../../actors/gateway/options.js';
import { GATEWAY_PARAMS } from '../../../config/gateway.js';
import { compileConfig } from '../../../config/resolve.js';
import type { Logger } from '../../../actors/observe/logger.js';
import { ACCESS, GROUPS_FILE, cells } from '../../integration/access-matrix.js';
import { tempDir } from '../../temp.js';

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = {
    lines,
    trace: () => undefined,
    debug: () => undefined,
    info: (m: string) => void lines.push(`info ${m}`),
    warn: (m: string) => void lines.push(`warn ${m}`),
    error: (m: string) => void lines.push(`error ${m}`),
    child: () => log,
  };
  return log;
}

const gatewayOptions = (params: Record<string, string>) =>
  compileGatewayOptions(
    compileConfig('gateway', GATEWAY_PARAMS, [
      { source: 'test', values: Object.entries({ Strict: 'true', ...params }) },
    ]).values,
  );
const fixedGroups = (text: string) => ({ get: () => parseGroups(text, 'g') });
const allowed = (a: Authorizer, user: string, route: string): boolean => {
  const [cls, op] = route.split('/') as [string, string];
  return a.decide(user, cls, op).allowed;
};
/** Sets a file's mtime well after its last one, so a change is seen however coarse the clock. */
const touchLater = (file: string, seconds: number): void => {
  const t = new Date(Date.now() + seconds * 1000);
  utimesSync(file, t, t);
};

describe('gateway authorization per route (Access, Groups)', () => {
  it('answers every user × route of the example table exactly as the table says', () => {
    const authorizer = new Authorizer(parseAccess(ACCESS), fixedGroups(GROUPS_FILE));
    for (const [route, user, status] of cells())
      expect(allowed(authorizer, user, route) ? 200 : 403, `${user} × ${route}`).to.equal(status);
  });

  it("denies a route no entry matches; '*' as a group lets any authenticated user in; group names are case-sensitive", () => {
    const a = new Authorizer(parseAccess('sql/select=*;queue=Ops'), fixedGroups('Ops: oscar\nops: nina\n'));
    expect(allowed(a, 'anyone', 'sql/select')).to.equal(true);
    expect(allowed(a, 'anyone', 'sql/insert'), 'no entry matches sql/insert').to.equal(false);
    expect(allowed(a, 'oscar', 'queue/add')).to.equal(true);
    expect(allowed(a, 'nina', 'queue/add'), "'ops' is not 'Ops'").to.equal(false);
    const d = a.decide('nina', 'Queue', 'Add');
    expect(d).to.deep.include({ allowed: false, route: 'Queue/Add' });
    expect(d.allowed === false && d.entry?.pattern).to.equal('queue');
    expect(new Authorizer(parseAccess('*=*'), undefined).decide('x', 'a', 'b').allowed).to.equal(true);
  });

  it('entries can name commands: a command entry grants that command (aliases read as their command); plain entries grant every command; the most specific pattern decides', () => {
    const groups = fixedGroups('writers: wendy\nreaders: rita\nops: oscar\n');
    const a = new Authorizer(parseAccess('queue/*:add=writers;queue/*:status,list,fetch=readers;queue/*=ops'), groups);
    const may = (user: string, command?: string): boolean => a.decide(user, 'queue', 'action', command).allowed;
    // no command control: the queue's default command, add
    expect([may('wendy'), may('wendy', 'queue'), may('wendy', 'ADD')]).to.deep.equal([true, true, true]);
    expect([may('wendy', 'clear'), may('wendy', 'list'), may('wendy', 'wipe')]).to.deep.equal([false, false, false]);
    expect([
      may('rita', 'status'),
      may('rita', 'show'),
      may('rita', 'get'),
      may('rita'),
      may('rita', 'delete'),
    ]).to.deep.equal([true, true, true, false, false]);
    // the plain entry at the same pattern grants every command
    expect([may('oscar'), may('oscar', 'clear'), may('oscar', 'purge'), may('oscar', 'status')]).to.deep.equal([
      true,
      true,
      true,
      true,
    ]);
    const d = a.decide('wendy', 'queue', 'action', 'wipe');
    expect(d).to.deep.include({ allowed: false, route: 'queue/action', command: 'delete' });
    // a command entry of a more specific pattern decides over a plain entry of a wider one, and the other way round
    const b = new Authorizer(parseAccess('queue/add=writers;queue/*:clear=ops'), groups);
    expect(
      b.decide('wendy', 'queue', 'add', 'clear').allowed,
      'the specific plain entry decides: write queue/add:add to narrow it',
    ).to.equal(true);
    const c = new Authorizer(parseAccess('queue/add:add=writers;queue/*=ops'), groups);
    expect([
      c.decide('wendy', 'queue', 'add').allowed,
      c.decide('wendy', 'queue', 'add', 'clear').allowed,
      c.decide('oscar', 'queue', 'add', 'clear').allowed,
    ]).to.deep.equal([true, false, true]);
  });

  it('parses group lists (spaces around commas allowed) and refuses bad entries naming them', () => {
    expect(parseAccess(' queue = ops , admins ;').entries.map((e) => [e.pattern, e.value.groups])).to.deep.equal([
      ['queue', ['ops', 'admins']],
    ]);
    expect(namedGroups(parseAccess('a=x,*;b=y,x;*=*'))).to.deep.equal(['x', 'y']);
    const bad: Array<[string, RegExp]> = [
      ['queue=', /entry 'queue=': names no group/],
      ['queue=ops,', /entry 'queue=ops,': '' is not a group name/],
      ['queue=o ps', /entry 'queue=o ps': 'o ps' is not a group name/],
      ['queue', /entry 'queue' is not of the form pattern\[:command,…\]=group1,group2/],
      ['queue/*:=ops', /entry 'queue\/\*:=ops' names no command after ':'/],
      ['queue/*:add=ops;queue:add,list=x', /pattern 'queue' is given twice.*\(for command 'add'\)/],
      ['sql/*/x=ops', /entry 'sql\/\*\/x=ops' is not of the form/],
      ['queue=ops;queue/*=admins', /pattern 'queue\/\*' is given twice/],
    ];
    for (const [text, message] of bad) expect(() => parseAccess(text), text).to.throw(message);
  });

  describe('start checks (one line naming the parameters and the fix)', () => {
    let dir: string;
    let users: string;
    before(() => {
      dir = tempDir('hn-access-');
      users = join(dir, 'users');
    });

    it('a bad Access entry stops the start naming the entry', () => {
      expect(() => gatewayOptions({ Users: users, Groups: 'g', Access: 'queue=ops;sql/select' })).to.throw(
        /^Access: entry 'sql\/select' is not of the form/,
      );
    });
    it('Access without Users stops the start, unless client certificates are required (their CN is the user)', () => {
      expect(() => gatewayOptions({ Access: '*=*' })).to.throw(
        /^Access is set but Users is not: .*set Users .*TLSClientAuth require.* or remove Access$/,
      );
      expect(() => gatewayOptions({ Access: '*=*', TLSClientAuth: 'request' })).to.throw(
        /^Access is set but Users is not/,
      );
      expect(() => gatewayOptions({ Access: '*=*', TLSClientAuth: 'require' })).to.not.throw();
    });
    it('Groups without Access stops the start (the groups would authorize nothing)', () => {
      expect(() => gatewayOptions({ Users: users, Groups: 'g' })).to.throw(
        /^Groups is set but Access is not: .*set Access .* or remove Groups$/,
      );
    });
    it('Access naming groups without Groups stops the start; with only * it needs no Groups', () => {
      expect(() => gatewayOptions({ Users: users, Access: 'queue=ops;*=admins,*' })).to.throw(
        /^Access names 'ops', 'admins' but Groups is not set/,
      );
      expect(gatewayOptions({ Users: users, Access: '*=*' }).access?.entries).to.have.length(1);
      expect(gatewayOptions({ Users: users }).access).to.equal(undefined);
    });
    it('Access naming a group the groups file does not define stops the start; a bad groups file names file and line', () => {
      const groups = join(dir, 'groups-start');
      writeFileSync(groups, 'admins: alice\n');
      const log = recordingLogger();
      expect(() => openAccess(parseAccess('queue=ops,admins;cmd=readers'), groups, log)).to.throw(
        `Access names 'ops', 'readers', which groups file '${groups}' does not define; define them there`,
      );
      writeFileSync(groups, 'admins: alice\nops alice\n');
      expect(() => openAccess(parseAccess('queue=admins'), groups, log)).to.throw(
        `groups file ${groups} line 2: expected 'group: user1 user2 …'`,
      );
      expect(() => openAccess(parseAccess('queue=admins'), join(dir, 'none'), log)).to.throw(
        /^Groups: cannot read groups file '.*none': ENOENT$/,
      );
    });
  });

  it('re-reads the groups file when it changes; a bad version is logged once and the groups read before are kept', () => {
    const dir = tempDir('hn-access-reload-');
    const groups = join(dir, 'groups');
    writeFileSync(groups, 'ops: oscar\nadmins: alice\n');
    const log = recordingLogger();
    const a = openAccess(parseAccess('queue=ops;*=admins'), groups, log, 0);
    expect(allowed(a, 'nina', 'queue/add')).to.equal(false);
    writeFileSync(groups, 'ops: oscar nina\nadmins: alice\n');
    touchLater(groups, 10);
    expect(allowed(a, 'nina', 'queue/add'), 'nina added to ops').to.equal(true);
    writeFileSync(groups, 'ops: oscar\nthis line is bad\nadmins: alice\n');
    touchLater(groups, 20);
    expect(allowed(a, 'nina', 'queue/add'), 'the bad version is not taken').to.equal(true);
    expect(allowed(a, 'nina', 'queue/add')).to.equal(true);
    const errors = log.lines.filter((l) => l.startsWith('error'));
    expect(errors, 'logged once for the bad version').to.have.length(1);
    expect(errors[0]).to.equal(
      `error Groups: groups file '${groups}' changed but groups file ${groups} line 2: expected 'group: user1 user2 …'; keeping what was read before`,
    );
    // a version without a group Access names is taken (the file decides membership), with a warning
    writeFileSync(groups, 'admins: alice nina\n');
    touchLater(groups, 30);
    expect(allowed(a, 'nina', 'queue/add')).to.equal(false);
    expect(allowed(a, 'nina', 'sql/x')).to.equal(true);
    expect(log.lines.filter((l) => l.startsWith('warn'))).to.deep.equal([
      `warn Access names 'ops', which groups file '${groups}' does not define: no one is in it until the file defines it again`,
    ]);
  });
});
