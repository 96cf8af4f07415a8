/**
 * The Config page's API (README, Changing a running node: the Config page): the running file with
 * its secrets masked, a dry run (the compile `hivenode check` runs: every error one line with its
 * path), an apply written back atomically with the versions before it kept as .1 … .5, a restore, a
 * refused file that changes nothing, masked secrets kept or refused, and the operator checks.
 */
import { expect } from 'chai';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { makeMessage } from '../../../protocol/message.js';
import type { FileNode } from './config-helpers.js';
import { SECRET, configPost, nodeText, operatorHeaders, startFileNode } from './config-helpers.js';
import { basicHeader, csrfOf } from './helpers.js';

const replyCode = async (c: FileNode): Promise<number> => (await c.node.hive.call('echo', makeMessage({}), 2_000)).Code;
const reloads = (c: FileNode): Array<{ user?: string; action?: string }> =>
  c.node.journal.entries().filter((e) => e.event === 'reload');

describe('console Config page API: dry run, apply, kept versions, restore, masked secrets', function () {
  this.timeout(30_000);
  let c: FileNode | undefined;
  afterEach(async () => {
    await c?.node.stop(2_000);
    c = undefined;
  });

  it('shows the running file with its secret values masked, on the page and in /api/config', async () => {
    c = await startFileNode();
    const api = (await (await fetch(`${c.base}/api/config`)).json()) as {
      file: string;
      text: string;
      hash: string;
      versions: unknown[];
      diskChanged: boolean;
    };
    expect(api.file).to.equal(c.file);
    expect(api.text).to.contain('Headers: "********"');
    expect(api.text).to.contain('# the console test');
    expect(api.text).not.to.contain('very-secret-1');
    expect(api.versions).to.deep.equal([]);
    expect(api.diskChanged).to.equal(false);
    const page = await (await fetch(`${c.base}/config`)).text();
    expect(page).to.contain('Headers: &quot;********&quot;');
    expect(page).not.to.contain('very-secret-1');
    expect(page).to.contain('id="config-form"');
  });

  it('a dry run compiles the text as a reload would: what it would change and the diff, or every error one line with its path; nothing changes', async () => {
    c = await startFileNode();
    const masked = ((await (await fetch(`${c.base}/api/config`)).json()) as { text: string }).text;
    const ok = await configPost(c.base, 'dry-run', { text: masked.replace('ReplyCode: 200', 'ReplyCode: 201') });
    expect(ok.status).to.equal(200);
    expect(ok.json).to.include({ ok: true, summary: 'changed echo (ReplyCode)' });
    expect(ok.json.errors).to.deep.equal([]);
    expect(ok.json.lines).to.deep.include({ op: '-', text: '  - {service: echo, NAME: echo, ReplyCode: 200}' });
    expect(ok.json.lines).to.deep.include({ op: '+', text: '  - {service: echo, NAME: echo, ReplyCode: 201}' });
    expect(JSON.stringify(ok.json)).not.to.contain('very-secret-1');

    const bad = await configPost(c.base, 'dry-run', {
      text:
        masked.replace('ReplyCode: 200', 'ReplyCode: 200, Bogus: 1') +
        '  - {service: exec, NAME: ex, Template: "{{ .Data.x "}\n',
    });
    expect(bad.json.ok).to.equal(false);
    const errors = bad.json.errors as string[];
    expect(errors).to.have.length(2);
    expect(errors[0]).to.match(/unknown parameter 'Bogus' \(node\.yaml services\[0\]\)/);
    expect(errors[1]).to.match(/^node\.yaml services\[2\]: .*Template/);
    for (const e of errors) expect(e).not.to.contain('\n');

    const yaml = await configPost(c.base, 'dry-run', { text: 'services: [' });
    expect((yaml.json.errors as string[])[0]).to.match(/node\.yaml: not valid YAML/);
    // nothing applied, nothing written, nothing journalled
    expect(await replyCode(c)).to.equal(200);
    expect(readFileSync(c.file, 'utf8')).to.equal(nodeText());
    expect(reloads(c)).to.deep.equal([]);
  });

  it('applies: the file written back (its secret kept where the mask was), the previous kept as .1, the change served, a reload event with the operator', async () => {
    c = await startFileNode();
    const { text, hash } = (await (await fetch(`${c.base}/api/config`)).json()) as { text: string; hash: string };
    const r = await configPost(c.base, 'apply', { text: text.replace('ReplyCode: 200', 'ReplyCode: 201'), base: hash });
    expect(r.status, JSON.stringify(r.json)).to.equal(200);
    expect(r.json).to.include({ applied: true, summary: 'changed echo (ReplyCode)' });
    expect(await replyCode(c)).to.equal(201);
    expect(readFileSync(c.file, 'utf8')).to.equal(nodeText(201));
    expect(readFileSync(`${c.file}.1`, 'utf8')).to.equal(nodeText(200));
    // no temporary file left beside it
    expect(readdirSync(c.dir).filter((f) => f.endsWith('.tmp'))).to.deep.equal([]);
    expect(reloads(c)).to.deep.equal([{ ...reloads(c)[0], user: 'ops', action: 'applied: changed echo (ReplyCode)' }]);
    const status = c.node.status().source!;
    expect(status.reloads).to.equal(1);
    const api = (await (await fetch(`${c.base}/api/config`)).json()) as {
      hash: string;
      history: Array<{ user: string; action: string }>;
    };
    expect(api.hash).to.equal(status.hash).and.not.equal(hash);
    expect(api.history.map((e) => [e.user, e.action])).to.deep.equal([['ops', 'applied: changed echo (ReplyCode)']]);
    // an edit opened before this apply is refused as a conflict
    const stale = await configPost(c.base, 'apply', {
      text: text.replace('ReplyCode: 200', 'ReplyCode: 203'),
      base: hash,
    });
    expect(stale.status).to.equal(409);
    expect(stale.json.reason).to.contain('the running file changed since this text was opened');
    expect(await replyCode(c)).to.equal(201);
  });

  it('keeps five versions (.1 newest … .5), and restores one in one action through the same path', async () => {
    c = await startFileNode();
    for (let code = 201; code <= 207; code++) {
      const r = await configPost(c.base, 'apply', { text: nodeText(code).replace(SECRET, '********') });
      expect(r.status, JSON.stringify(r.json)).to.equal(200);
    }
    expect(readFileSync(c.file, 'utf8')).to.equal(nodeText(207));
    for (let n = 1; n <= 5; n++) expect(readFileSync(`${c.file}.${n}`, 'utf8'), `.${n}`).to.equal(nodeText(207 - n));
    expect(existsSync(`${c.file}.6`)).to.equal(false);
    const versions = ((await (await fetch(`${c.base}/api/config`)).json()) as { versions: Array<{ n: number }> })
      .versions;
    expect(versions.map((v) => v.n)).to.deep.equal([1, 2, 3, 4, 5]);
    const kept = (await (await fetch(`${c.base}/api/config/versions/3`)).json()) as { text: string };
    expect(kept.text).to.contain('ReplyCode: 204').and.contain('Headers: "********"');

    const restored = await configPost(c.base, 'restore', { version: 3 });
    expect(restored.status, JSON.stringify(restored.json)).to.equal(200);
    expect(restored.json.summary).to.equal('changed echo (ReplyCode)');
    expect(await replyCode(c)).to.equal(204);
    expect(readFileSync(c.file, 'utf8')).to.equal(nodeText(204));
    expect(readFileSync(`${c.file}.1`, 'utf8')).to.equal(nodeText(207));
    expect(reloads(c).at(-1)).to.include({
      user: 'ops',
      action: 'applied (restore of node.yaml.3): changed echo (ReplyCode)',
    });
    const missing = await configPost(c.base, 'restore', { version: 9 });
    expect(missing.status).to.equal(404);
  });

  it('a refused file changes nothing: the node serves on, the file and its versions stay, the refusal is journalled with the operator', async () => {
    c = await startFileNode();
    const r = await configPost(c.base, 'apply', {
      text: nodeText(201, '\n  - {service: echo, NAME: two, Bogus: 1}').replace(SECRET, '********'),
    });
    expect(r.status).to.equal(400);
    expect(r.json.applied).to.equal(false);
    expect(r.json.reason).to.match(/unknown parameter 'Bogus' \(node\.yaml services\[1\]\)/);
    expect(await replyCode(c)).to.equal(200);
    expect(readFileSync(c.file, 'utf8')).to.equal(nodeText());
    expect(readdirSync(c.dir).filter((f) => f.startsWith('node.yaml.') || f.endsWith('.tmp'))).to.deep.equal([]);
    expect(reloads(c).at(-1)).to.include({ user: 'ops' });
    expect(reloads(c).at(-1)!.action).to.match(/^refused: .*unknown parameter 'Bogus'/);
    // a section a reload cannot change: refused in one line
    const dash = await configPost(c.base, 'apply', { text: `dashboard: {Port: 1}\n${nodeText(201)}` });
    expect(dash.status).to.equal(400);
    expect(dash.json.reason).to.equal('the dashboard section is not reloadable; restart the node to apply it');
    expect(await replyCode(c)).to.equal(200);
  });

  it('masked secrets: a mask keeps the running value; a mask with no running value to keep is refused naming where; a new value is written', async () => {
    c = await startFileNode();
    const noValue = await configPost(c.base, 'apply', {
      text: nodeText().replace(SECRET, '********').replace('NAME: client', 'NAME: other'),
    });
    expect(noValue.status).to.equal(400);
    expect(noValue.json.reason).to.equal(
      "node.yaml services[1].Headers: holds the mask ********, but the running file has no Headers for service 'other' to keep: write the value (or a ${VAR} or file:// reference)",
    );
    expect(readFileSync(c.file, 'utf8')).to.equal(nodeText());
    const changed = await configPost(c.base, 'apply', {
      text: nodeText().replace(SECRET, 'Authorization: Bearer next-secret-2'),
    });
    expect(changed.status, JSON.stringify(changed.json)).to.equal(200);
    expect(changed.json.summary).to.equal('changed client (Headers)');
    expect(readFileSync(c.file, 'utf8')).to.contain('next-secret-2');
    const shown = ((await (await fetch(`${c.base}/api/config`)).json()) as { text: string }).text;
    expect(shown).not.to.contain('next-secret-2');
    expect(JSON.stringify(c.node.journal.entries())).not.to.contain('next-secret-2');
  });

  it('POST /api/config/reload re-reads the file from disk, as SIGHUP does', async () => {
    c = await startFileNode();
    writeFileSync(c.file, nodeText(202));
    expect(((await (await fetch(`${c.base}/api/config`)).json()) as { diskChanged: boolean }).diskChanged).to.equal(
      true,
    );
    const r = await configPost(c.base, 'reload', {});
    expect(r.status).to.equal(200);
    expect(r.json.summary).to.equal('changed echo (ReplyCode)');
    expect(await replyCode(c)).to.equal(202);
    expect(existsSync(`${c.file}.1`), 'a reload from disk writes nothing').to.equal(false);
  });

  it('the operator checks hold: 401 without credentials, 403 without a token or from another origin, 403 on a read-only console; reading needs nothing', async () => {
    c = await startFileNode();
    const body = { text: nodeText(209) };
    const { cookie, token } = await csrfOf(c.base);
    const anonymous = await configPost(c.base, 'dry-run', body, { cookie, 'x-csrf-token': token });
    expect(anonymous.status).to.equal(401);
    const noToken = await configPost(c.base, 'apply', body, { cookie, authorization: basicHeader() });
    expect(noToken.status).to.equal(403);
    expect(noToken.json.Message).to.contain('CSRF token is required');
    const foreign = await configPost(c.base, 'apply', body, {
      ...(await operatorHeaders(c.base)),
      origin: 'http://evil.example',
    });
    expect(foreign.status).to.equal(403);
    expect(foreign.json.Message).to.contain('cross-origin request refused');
    expect(await replyCode(c)).to.equal(200);
    expect(reloads(c)).to.deep.equal([]);
    await c.node.stop(2_000);

    c = await startFileNode({ readOnly: true });
    expect((await fetch(`${c.base}/config`)).status).to.equal(200);
    for (const action of ['dry-run', 'apply', 'restore', 'reload']) {
      const r = await configPost(c.base, action, action === 'restore' ? { version: 1 } : body);
      expect(r.status, action).to.equal(403);
      expect(r.json.Message, action).to.contain('the console is read-only: set dashboard.Users');
    }
    const page = await (await fetch(`${c.base}/config`)).text();
    expect(page).not.to.contain('id="config-form"');
    expect(page).to.contain('id="config-text"');
  });
});
