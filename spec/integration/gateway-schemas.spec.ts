/**
 * Request validation per route through a real gateway (README, Request validation): a request whose
 * Data does not match its route's JSON Schema (2020-12) is answered 400 naming each failing field's
 * path and why, and never reaches the hive; the most specific entry decides; controls are not Data;
 * a schema that cannot be read or compiled stops the start in one line.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { passwdLine } from '../../actors/auth/authenticate.js';
import { loadInterceptor, serveInterceptor } from '../../actors/interceptor/server.js';
import { tempDir } from '../temp.js';
import type { RunningGateway } from './gateway-harness.js';
import { startError, startGateway } from './gateway-harness.js';

interface Answer {
  status: number;
  json: { Code: number; Message: string; Data: Record<string, string[]> };
}

async function post(
  gw: RunningGateway,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await request(`${gw.base}/${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });
  return { status: res.statusCode, json: (await res.body.json()) as Answer['json'] };
}

const status = (gw: RunningGateway, kind: string): Record<string, number> =>
  gw.node.services.find((s) => s.kind === kind)!.running.status() as never;

const ORDER = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    order: { type: 'array', minItems: 1, items: { type: 'string', pattern: '^[0-9]+$' } },
    customer: { type: 'array', maxItems: 1, items: { type: 'string', format: 'email' } },
    priority: { type: 'array', items: { enum: ['low', 'high'] } },
  },
  required: ['order', 'customer'],
  additionalProperties: false,
};

describe('gateway request validation (Schemas)', function () {
  this.timeout(30_000);
  let gw: RunningGateway | undefined;
  let dir: string;
  beforeEach(() => {
    dir = tempDir('hn-gwschema-');
    writeFileSync(join(dir, 'order.json'), JSON.stringify(ORDER));
    writeFileSync(join(dir, 'any.json'), JSON.stringify({ type: 'object', required: ['id'] }));
  });
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  it('Data that does not match: 400 naming each failing field and why, nothing reaches the hive; Data that matches passes', async () => {
    gw = await startGateway({ Schemas: `orders/new=file://${join(dir, 'order.json')}`, Routes: 'orders=echo' });
    const ok = await post(gw, 'orders/new', { order: ['12', '7'], customer: ['ann@example.com'] });
    expect(ok.status).to.equal(200);
    expect(ok.json.Data).to.deep.equal({ order: ['12', '7'], customer: ['ann@example.com'] });
    const handled = status(gw, 'echo').handled;

    const bad = await post(gw, 'orders/new', {
      order: ['12', 'x7'],
      customer: ['ann', 'bob@example.com'],
      priority: ['urgent'],
      extra: ['1'],
    });
    expect(bad.status).to.equal(400);
    expect(bad.json.Code).to.equal(400);
    const problems = [
      '/order/1: must match pattern "^[0-9]+$"',
      '/customer: must NOT have more than 1 items',
      '/customer/0: must match format "email"',
      '/priority/0: must be one of "low", "high"',
      '/extra: is not allowed',
    ];
    expect(bad.json.Data.errors).to.have.members(problems);
    expect(bad.json.Message).to.match(/^Data does not match the schema of route 'orders\/new': /);
    for (const p of problems) expect(bad.json.Message).to.contain(p);

    const missing = await post(gw, 'orders/new', { order: [] });
    expect(missing.status).to.equal(400);
    expect(missing.json.Data.errors).to.have.members([
      '/order: must NOT have fewer than 1 items',
      '/customer: is required',
    ]);
    // a message-shaped body is checked on its Data
    const shaped = await post(gw, 'orders/new', { Data: { order: ['1'] } });
    expect(shaped.json.Data.errors).to.deep.equal(['/customer: is required']);

    expect(status(gw, 'echo').handled, 'no refused request reached echo').to.equal(handled);
    expect(status(gw, 'gateway').invalid).to.equal(3);
  });

  it('the most specific entry decides; routes without an entry are not checked; controls are not Data', async () => {
    gw = await startGateway({
      Schemas: `orders/new=file://${join(dir, 'order.json')};orders=file://${join(dir, 'any.json')}`,
      Routes: 'orders=echo;open=echo',
      ControlPrefix: '_',
      ControlAllowList: 'platform-break,command',
    });
    expect((await post(gw, 'orders/other', { x: ['1'] })).json.Data.errors).to.deep.equal(['/id: is required']);
    expect((await post(gw, 'orders/other', { id: ['1'] })).status).to.equal(200);
    expect((await post(gw, 'open/x', { anything: ['goes'] })).status).to.equal(200);
    // _command is a control, taken out of Data before the check (additionalProperties false would refuse it)
    const withControl = await post(gw, 'orders/new', { order: ['1'], customer: ['a@b.example'], _command: ['add'] });
    expect(withControl.status, JSON.stringify(withControl.json)).to.equal(200);
    // a preview (Platform-Break) is checked as the request it previews
    expect((await post(gw, 'orders/new', { order: ['x'] }, { 'platform-break': 'true' })).status).to.equal(400);
  });

  it('authentication and authorization come first: without credentials 401, on a refused route 403, whatever the Data', async () => {
    const users = join(dir, 'users');
    writeFileSync(users, `${await passwdLine('ann', 'pw', 4)}\n`);
    gw = await startGateway({
      Schemas: `*=file://${join(dir, 'any.json')}`,
      Users: users,
      Access: 'echo=*',
      Routes: 'echo=echo;other=echo',
    });
    const ann = { authorization: `Basic ${Buffer.from('ann:pw').toString('base64')}` };
    expect((await post(gw, 'echo/x', { x: ['1'] })).status).to.equal(401);
    expect((await post(gw, 'other/x', { x: ['1'] }, ann)).status).to.equal(403);
    expect((await post(gw, 'echo/x', { x: ['1'] }, ann)).status).to.equal(400);
    expect((await post(gw, 'echo/x', { id: ['1'] }, ann)).status).to.equal(200);
  });

  it('interceptor mode: the Data the before interceptor made is checked', async () => {
    const examples = new URL('../../examples/interceptors/', import.meta.url).pathname;
    const [before, after] = await Promise.all([
      serveInterceptor(await loadInterceptor(`${examples}json-before.mjs`), 0),
      serveInterceptor(await loadInterceptor(`${examples}json-after.mjs`), 0),
    ]);
    try {
      gw = await startGateway({
        Strict: false,
        InterceptBefore: `http://127.0.0.1:${before.port}/`,
        InterceptAfter: `http://127.0.0.1:${after.port}/`,
        Schemas: `orders=file://${join(dir, 'any.json')}`,
      });
      const bad = await post(gw, 'orders/create', { x: ['1'] });
      expect(bad.status).to.equal(400);
      expect(bad.json.Data.errors).to.deep.equal(['/id: is required']);
      expect((await post(gw, 'orders/create', { id: ['42'] })).status).to.equal(200);
    } finally {
      await gw?.stop();
      gw = undefined;
      await Promise.all([before.close(), after.close()]);
    }
  });

  it('the start refuses, in one line naming the file and the entry, a schema that is missing, not JSON or does not compile', async () => {
    writeFileSync(join(dir, 'broken.json'), '{"type": "object",');
    writeFileSync(
      join(dir, 'typo.json'),
      JSON.stringify({ type: 'object', properties: { a: { type: 'array', minLenght: 1 } } }),
    );
    writeFileSync(join(dir, 'badtype.json'), JSON.stringify({ type: 'objekt' }));
    writeFileSync(
      join(dir, 'draft7.json'),
      JSON.stringify({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' }),
    );
    writeFileSync(join(dir, 'format.json'), JSON.stringify({ type: 'string', format: 'telephone' }));
    const refused: Array<[string, RegExp]> = [
      [
        `echo=file://${join(dir, 'nope.json')}`,
        /^Schemas: schema file '.*nope\.json' \(entry 'echo'\) cannot be read: .*ENOENT.*; write it or correct the path/,
      ],
      [
        `echo=file://${join(dir, 'broken.json')}`,
        /^Schemas: schema file '.*broken\.json' \(entry 'echo'\) is not JSON: /,
      ],
      [
        `echo/x=file://${join(dir, 'typo.json')}`,
        /^Schemas: schema file '.*typo\.json' \(entry 'echo\/x'\) does not compile: strict mode: unknown keyword: "minLenght"/,
      ],
      [`*=file://${join(dir, 'badtype.json')}`, /does not compile: schema is invalid: /],
      [
        `echo=file://${join(dir, 'draft7.json')}`,
        /declares \$schema 'http:\/\/json-schema\.org\/draft-07\/schema#': only JSON Schema 2020-12 is understood/,
      ],
      [`echo=file://${join(dir, 'format.json')}`, /does not compile: unknown format "telephone"/],
      ['echo=file://', /Schemas: entry 'echo=file:\/\/': names no schema file/],
      ['echo', /Schemas: entry 'echo' is not of the form pattern=file:\/\/<schema\.json>/],
    ];
    for (const [schemas, message] of refused) {
      const error = await startError({ Schemas: schemas });
      expect(error?.name, schemas).to.equal('ConfigError');
      expect(error?.message, schemas).to.match(message);
      expect(error?.message, schemas).to.not.contain('\n');
    }
  });
});
