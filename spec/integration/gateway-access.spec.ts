/**
 * Authorization per route through a real gateway on the embedded hive (acceptance of the
 * authorization issue): the 403 matrix of the example Access table — every user × route answers
 * exactly as access-matrix.ts writes it, 401 without credentials —, the route taken from the message
 * (not only the path), the 403's shape, log line and counter, both files re-read on change, and
 * `hivenode passwd --group` writing files the gateway then goes by.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { passwdLine } from '../../actors/auth/authenticate.js';
import type { RunningGateway } from './gateway-harness.js';
import { startGateway } from './gateway-harness.js';
import { ACCESS, MATRIX, PASSWORD, basic, cells, writeMatrixFiles } from './access-matrix.js';
import { tempDir } from '../temp.js';
import { HIVENODE_ARGS } from '../support/hivenode-bin.js';
import { sleep, until } from '../support/wait.js';

async function post(
  url: string,
  headers: Record<string, string> = {},
  body = '{"a":["1"]}',
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const counts = (gw: RunningGateway): { unauthorized: number; forbidden: number } =>
  gw.node.services.find((s) => s.kind === 'gateway')!.running.status() as never;

/** Polls until `status` of the request is `want` or `ms` pass; the last status seen. */
async function statusWithin(ms: number, want: number, send: () => Promise<{ status: number }>): Promise<number> {
  const deadline = Date.now() + ms;
  let status = 0;
  while (Date.now() < deadline) {
    status = (await send()).status;
    if (status === want) break;
    await sleep(200);
  }
  return status;
}

/** Sets a file's mtime well after its last one, so the change is seen however coarse the clock. */
const touchLater = (file: string, seconds: number): void => {
  const t = new Date(Date.now() + seconds * 1000);
  utimesSync(file, t, t);
};

describe('gateway authorization per route (Access, Groups)', function () {
  this.timeout(40_000);
  let dir: string;
  let gw: RunningGateway | undefined;
  beforeEach(() => {
    dir = tempDir('hn-gwaccess-');
  });
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  it('the 403 matrix: every user × route of the example Access table answers exactly as the table says; 401 without or with wrong credentials', async () => {
    const files = await writeMatrixFiles(dir);
    gw = await startGateway({ Users: files.users, Groups: files.groups, Access: ACCESS });
    const mismatches: string[] = [];
    for (const [route, user, want] of cells()) {
      const r = await post(`${gw.base}/${route}`, { authorization: basic(user, PASSWORD) });
      if (r.status !== want) mismatches.push(`${user} × ${route}: ${r.status}, the table says ${want}`);
      if (want === 200) expect(r.json.Data, `${user} × ${route} reached the echo`).to.deep.equal({ a: ['1'] });
    }
    for (const route of Object.keys(MATRIX)) {
      const none = await post(`${gw.base}/${route}`);
      if (none.status !== 401) mismatches.push(`no credentials × ${route}: ${none.status}, not 401`);
      const wrong = await post(`${gw.base}/${route}`, { authorization: basic('alice', 'wrong-password') });
      if (wrong.status !== 401) mismatches.push(`wrong password × ${route}: ${wrong.status}, not 401`);
    }
    expect(mismatches).to.deep.equal([]);
    const forbidden = cells().filter(([, , s]) => s === 403).length;
    expect(counts(gw)).to.deep.include({ forbidden, unauthorized: 2 * Object.keys(MATRIX).length });
  });

  it('the 403 names the route and the user, not the groups; one warn line with user and route, never credentials', async () => {
    const files = await writeMatrixFiles(dir);
    gw = await startGateway({ Users: files.users, Groups: files.groups, Access: ACCESS, LOGSENSITIVE: true });
    const r = await post(`${gw.base}/cmd/run`, { authorization: basic('nina', PASSWORD) });
    expect(r.status).to.equal(403);
    expect(r.json).to.deep.equal({
      Code: 403,
      Message: "route 'cmd/run' is not allowed for user 'nina'",
      Data: {},
      List: null,
    });
    expect(JSON.stringify(r.json)).to.not.contain('admins');
    await sleep(50);
    const lines = gw
      .logs()
      .split('\n')
      .filter((l) => l.includes('403'));
    expect(lines).to.have.length(1);
    expect(lines[0]).to.contain("403: user 'nina' may not use route 'cmd/run' (Access entry 'cmd/*=admins')");
    expect(lines[0]).to.match(/\bwarn\b/i);
    for (const secret of [PASSWORD, basic('nina', PASSWORD).slice(6)]) expect(gw.logs()).to.not.contain(secret);
  });

  it('authorizes the route of the message: a class from the body, a preview and a hand-over are refused alike', async () => {
    const files = await writeMatrixFiles(dir);
    gw = await startGateway({
      Users: files.users,
      Groups: files.groups,
      Access: ACCESS,
      ControlAllowList: 'platform-break',
    });
    const nina = { authorization: basic('nina', PASSWORD) };
    const asMessage = '{"Class":"cmd","Operation":"run","Data":{}}';
    expect((await post(`${gw.base}/`, nina, asMessage)).json.Message).to.equal(
      "route 'cmd/run' is not allowed for user 'nina'",
    );
    expect((await post(`${gw.base}/`, { authorization: basic('alice', PASSWORD) }, asMessage)).status).to.equal(200);
    expect((await post(`${gw.base}/cmd/run`, { ...nina, 'platform-break': 'true' })).status, 'preview').to.equal(403);
    expect(
      (await post(`${gw.base}/cmd/run`, { ...nina, 'platform-procedure': 'Execution' })).status,
      'hand-over',
    ).to.equal(403);
    // the default class and operation (no path, no Class) are a route like any other: rest/input → '*' → admins
    expect((await post(`${gw.base}/`, nina)).json.Message).to.equal(
      "route 'rest/input' is not allowed for user 'nina'",
    );
  });

  it('in interceptor mode the route is what the before interceptor made of the request', async () => {
    const files = await writeMatrixFiles(dir);
    const interceptors = new URL('../../examples/interceptors/', import.meta.url).pathname;
    gw = await startGateway({
      Strict: false,
      InterceptBefore: `module://${interceptors}json-before.mjs`,
      InterceptAfter: `module://${interceptors}json-after.mjs`,
      Users: files.users,
      Groups: files.groups,
      Access: ACCESS,
    });
    const oscar = { authorization: basic('oscar', PASSWORD) };
    expect((await post(`${gw.base}/queue/add`, oscar)).status).to.equal(200);
    expect((await post(`${gw.base}/cmd/run`, oscar)).json.Message).to.equal(
      "route 'cmd/run' is not allowed for user 'oscar'",
    );
    // a message-shaped body passes the mapper as it is: its Class decides, not the path
    expect((await post(`${gw.base}/queue/add`, oscar, '{"Class":"cmd","Operation":"run","Data":{}}')).status).to.equal(
      403,
    );
  });

  it('Access without Users is refused at start: exit 2, one line naming both parameters and the fix', () => {
    const r = spawnSync(process.execPath, [...HIVENODE_ARGS, 'gateway', '-Strict=true', '-Port=0', '-Access=*=*'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status, r.stderr).to.equal(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines, r.stderr).to.have.length(1);
    expect(lines[0]).to.contain(
      "Access is set but Users is not: authorization per route needs authenticated users; set Users (write it with 'hivenode passwd'), JWKS (Bearer tokens), require client certificates (TLSClientAuth require), or remove Access",
    );
  });

  it('re-reads both files on change: a group membership and a removed user take effect within the reload interval (5 s)', async () => {
    const files = await writeMatrixFiles(dir);
    gw = await startGateway({ Users: files.users, Groups: files.groups, Access: ACCESS });
    const { base } = gw;
    const as = (user: string) => () => post(`${base}/cmd/run`, { authorization: basic(user, PASSWORD) });
    expect((await as('nina')()).status).to.equal(403);
    expect((await as('alice')()).status, 'alice cached').to.equal(200);
    writeFileSync(files.groups, readFileSync(files.groups, 'utf8').replace('admins: alice', 'admins: alice nina'));
    touchLater(files.groups, 10);
    expect(await statusWithin(9_000, 200, as('nina')), 'nina in admins within 9 s').to.equal(200);
    // alice removed from the users file: refused though only her cached credentials are used since
    writeFileSync(
      files.users,
      readFileSync(files.users, 'utf8')
        .split('\n')
        .filter((l) => !l.startsWith('alice:'))
        .join('\n'),
    );
    touchLater(files.users, 10);
    expect(await statusWithin(9_000, 401, as('alice')), 'alice refused within 9 s').to.equal(401);
    // a broken groups file is not taken: nina keeps admins, and the error is logged naming the line
    writeFileSync(files.groups, 'admins alice nina\n');
    touchLater(files.groups, 20);
    const refused = `groups file ${files.groups} line 1: expected 'group: user1 user2 …'; keeping what was read before`;
    // the files are looked at when a request needs them (at most once per reload interval): ask until the broken one was read
    await until(async () => (await as('nina')(), gw!.logs().includes(refused)), {
      ms: 9_000,
      every: 200,
      what: () => `the broken groups file refused in the log: ${gw!.logs()}`,
    });
    expect((await as('nina')()).status).to.equal(200);
  });

  it('refuses to start with an Access group the groups file does not define (one line naming it)', async () => {
    const files = await writeMatrixFiles(dir);
    let error: unknown;
    try {
      gw = await startGateway({ Users: files.users, Groups: files.groups, Access: `${ACCESS};sql/delete=dba` });
    } catch (e) {
      error = e;
    }
    expect(String(error)).to.contain(`Access names 'dba', which groups file '${files.groups}' does not define`);
  });

  it('hivenode passwd --group writes the users line and the group memberships the gateway then goes by', async () => {
    const users = join(dir, 'users.htpasswd');
    const groups = join(dir, 'groups');
    writeFileSync(groups, '# who may do what\nadmins: alice\n\nops: oscar\n');
    writeFileSync(users, `${await passwdLine('alice', PASSWORD, 4)}\n`, { mode: 0o640 });
    const passwd = (...args: string[]) =>
      spawnSync(process.execPath, [...HIVENODE_ARGS, 'passwd', ...args], {
        input: 'pw-of-nina-1\n',
        encoding: 'utf8',
        timeout: 30_000,
      });
    const ok = passwd('nina', '--file', users, '--group', 'ops', '--group', 'readers,admins', '--groups-file', groups);
    expect(ok.status, ok.stderr).to.equal(0);
    expect(ok.stdout).to.contain(`user 'nina' is in 'ops', 'readers', 'admins' in ${groups}`);
    expect(readFileSync(groups, 'utf8')).to.equal(
      '# who may do what\nadmins: alice nina\n\nops: oscar nina\nreaders: nina\n',
    );
    expect(statSync(users).mode & 0o777, 'the replaced file keeps its mode').to.equal(0o640);
    expect(
      readFileSync(users, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => l.split(':')[0]),
    ).to.deep.equal(['alice', 'nina']);
    const refusals: Array<[string[], string]> = [
      [['nina', '--file', users, '--group', 'ops'], '--group needs --groups-file'],
      [['nina', '--file', users, '--groups-file', groups], '--groups-file needs at least one --group'],
      [['nina', '--file', users, '--group', 'a:b', '--groups-file', groups], "group name 'a:b' is not valid"],
    ];
    const before = [readFileSync(users, 'utf8'), readFileSync(groups, 'utf8')];
    for (const [args, message] of refusals) {
      const r = passwd(...args);
      expect(r.status, args.join(' ')).to.equal(2);
      expect(r.stderr.trim().split('\n'), r.stderr).to.have.length(1);
      expect(r.stderr).to.contain(message);
    }
    writeFileSync(join(dir, 'bad-groups'), 'ops oscar\n');
    const bad = passwd('nina', '--file', users, '--group', 'ops', '--groups-file', join(dir, 'bad-groups'));
    expect(bad.status).to.equal(2);
    expect(bad.stderr).to.contain('line 1: expected');
    expect(
      [readFileSync(users, 'utf8'), readFileSync(groups, 'utf8')],
      'a refused command writes nothing',
    ).to.deep.equal(before);

    gw = await startGateway({ Users: users, Groups: groups, Access: 'queue=ops;sql/select=readers;*=admins' });
    for (const route of ['queue/add', 'sql/select', 'cmd/run']) {
      expect(
        (await post(`${gw.base}/${route}`, { authorization: basic('nina', 'pw-of-nina-1') })).status,
        route,
      ).to.equal(200);
    }
  });
});
