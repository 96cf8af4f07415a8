/**
 * The gateway's OpenAPI 3.1 document (README, OpenAPI) from a real node (echo, a SQLite SQL service,
 * a queue, a gateway with Users, Schemas, Webhooks and RateLimits): it passes an OpenAPI 3.1
 * validator (@seriousme/openapi-schema-validator), every request body schema compiles as JSON Schema
 * 2020-12, and one request generated from each operation — its path parameters, a body built from its
 * schema, its security — is answered 200. It follows the gateway's authentication unless
 * OpenAPIPublic, and OpenAPIPath '' turns it off.
 */
import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { request } from 'undici';
import { passwdLine } from '../../actors/auth/authenticate.js';
import { HiveNode } from '../../node/node.js';
import { tempDir } from '../temp.js';
import type { RunningGateway } from './gateway-harness.js';
import { startGateway } from './gateway-harness.js';

type Json = Record<string, unknown>;
const ANN = `Basic ${Buffer.from('ann:pw').toString('base64')}`;

const layer = (source: string, params: Record<string, string | number | boolean>) => ({
  source,
  values: Object.entries(params).map(([k, v]) => [k, String(v)] as const),
});

/** A value the schema accepts, from its `examples` or built from its type and required properties. */
function sample(schema: Json | undefined, root: Json): unknown {
  if (!schema) return {};
  if (typeof schema.$ref === 'string')
    return sample(
      schema.$ref
        .split('/')
        .slice(1)
        .reduce<Json>((o, k) => o[k] as Json, root),
      root,
    );
  if (Array.isArray(schema.examples)) return schema.examples[0];
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.type === 'array') return [sample(schema.items as Json, root)];
  if (schema.type === 'string') return 'x';
  if (schema.type === 'object') {
    const out: Json = {};
    for (const name of (schema.required as string[] | undefined) ?? [])
      out[name] = sample(
        (schema.properties as Record<string, Json> | undefined)?.[name] ?? (schema.additionalProperties as Json),
        root,
      );
    return out;
  }
  return 'x';
}

describe('gateway OpenAPI document (OpenAPIPath)', function () {
  this.timeout(60_000);
  let node: HiveNode | undefined;
  let gw: RunningGateway | undefined;
  afterEach(async () => {
    await node?.stop(2000);
    await gw?.stop();
    node = gw = undefined;
  });

  it('validates as OpenAPI 3.1 and drives one generated request per route to a 200', async () => {
    const dir = tempDir('hn-gwopenapi-');
    writeFileSync(join(dir, 'users'), `${await passwdLine('ann', 'pw', 4)}\n`);
    writeFileSync(join(dir, 'gh.secret'), 'a-github-secret');
    writeFileSync(join(dir, 'init.sql'), 'CREATE TABLE IF NOT EXISTS people (id TEXT, name TEXT);\n');
    writeFileSync(
      join(dir, 'order.json'),
      JSON.stringify({
        type: 'object',
        properties: { order: { type: 'array', items: { type: 'string', pattern: '^[0-9]+$' } } },
        required: ['order'],
        additionalProperties: false,
        examples: [{ order: ['42'] }],
      }),
    );
    const logs = new PassThrough();
    logs.resume();
    node = await HiveNode.start({
      logStream: logs,
      services: [
        { kind: 'echo', layers: [layer('t', { NAME: 'echo' })] },
        {
          kind: 'sql',
          layers: [
            layer('t', {
              NAME: 'people',
              SQL_ENGINE: 'sqlite',
              SQL_DATABASE: join(dir, 'db.sqlite'),
              SQL_INITFILE: join(dir, 'init.sql'),
              SQL_STATEMENT: 'SELECT',
              SQL_TABLE: 'people',
              SQL_WHERE: 'id = {{ id }} OR name = {{ name }}',
            }),
          ],
        },
        { kind: 'queue', layers: [layer('t', { NAME: 'jobs', DefaultChannel: 'echo' })] },
        {
          kind: 'gateway',
          layers: [
            layer('t', {
              NAME: 'gw',
              Port: 0,
              Strict: true,
              OUTPUTCHANNEL: 'echo',
              BasePath: '/api',
              Users: join(dir, 'users'),
              Routes: 'orders=echo;people/select=people;jobs=jobs;github=echo',
              Schemas: `orders/new=file://${join(dir, 'order.json')}`,
              Webhooks: `github=github:file://${join(dir, 'gh.secret')}`,
              RateLimits: 'orders=100/s',
              ControlPrefix: '_',
              ControlAllowList: 'command,platform-break',
            }),
          ],
        },
      ],
    });
    const port = node.services.find((s) => s.kind === 'gateway')!.running.status().port as number;
    const base = `http://127.0.0.1:${port}`;
    expect(
      (await request(`${base}/api/openapi.json`)).statusCode,
      'the document follows the gateway authentication',
    ).to.equal(401);
    const res = await request(`${base}/api/openapi.json`, { headers: { authorization: ANN } });
    expect(res.statusCode).to.equal(200);
    const doc = (await res.body.json()) as Json;

    // the validator can fail: a response without its description is refused
    const broken = structuredClone(doc) as { paths: Record<string, { post: { responses: Json } }> };
    broken.paths['/people/select']!.post.responses['200'] = { content: {} };
    expect((await new Validator().validate(broken)).valid, 'a response without a description').to.equal(false);
    const validation = await new Validator().validate(doc);
    expect(validation.errors, JSON.stringify(validation.errors)).to.equal(undefined);
    expect(validation.valid).to.equal(true);
    expect(doc.openapi).to.equal('3.1.0');
    const paths = doc.paths as Record<string, { post: Json }>;
    expect(Object.keys(paths).sort()).to.deep.equal([
      '/github/{operation}',
      '/jobs/{operation}',
      '/orders/new',
      '/orders/{operation}',
      '/people/select',
      '/{class}/{operation}',
    ]);
    const schemes = (doc.components as Json).securitySchemes as Record<string, Json>;
    expect(schemes.basic).to.deep.include({ type: 'http', scheme: 'basic' });
    expect(schemes.webhook_github).to.deep.include({ type: 'apiKey', in: 'header', name: 'X-Hub-Signature-256' });
    expect(doc.servers).to.deep.equal([{ url: '/api' }]);

    // what the targets declare: the SQL placeholders, the queue's controls (as _-prefixed fields the allow list lets through)
    const bodyOf = (path: string): Json =>
      ((paths[path]!.post.requestBody as Json).content as Record<string, { schema: Json }>)['application/json']!.schema;
    expect(bodyOf('/people/select').required).to.deep.equal(['id', 'name']);
    expect(Object.keys(bodyOf('/jobs/{operation}').properties as Json)).to.deep.equal(['_command']);
    expect(bodyOf('/orders/new').examples).to.deep.equal([{ order: ['42'] }]);
    expect((paths['/orders/new']!.post.responses as Json)['429']).to.not.equal(undefined);

    const ajv = new Ajv2020({ strict: false });
    formats.default(ajv);
    ajv.addSchema(doc, 'doc');
    for (const [path, { post }] of Object.entries(paths)) {
      const body = bodyOf(path);
      expect(() => ajv.compile(body.$ref ? { $ref: `doc${String(body.$ref)}` } : body), path).to.not.throw();
      const url = `${base}/api${path.replace('{class}', 'anything').replace('{operation}', 'op')}`;
      const payload = JSON.stringify(sample(body, doc));
      const security =
        (post.security as Array<Record<string, string[]>> | undefined) ??
        (doc.security as Array<Record<string, string[]>>);
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (security.some((s) => 'basic' in s)) headers.authorization = ANN;
      if (security.some((s) => 'webhook_github' in s))
        headers['x-hub-signature-256'] =
          `sha256=${createHmac('sha256', 'a-github-secret').update(payload).digest('hex')}`;
      const answer = await request(url, { method: 'POST', body: payload, headers });
      const text = await answer.body.text();
      expect(answer.statusCode, `${path} ${payload}: ${text}`).to.equal(200);
      expect(Object.keys(post.responses as Json)).to.include('200');
    }
  });

  it('OpenAPIPublic serves it without credentials; OpenAPIPath "" turns it off; other methods get 405', async () => {
    const dir = tempDir('hn-gwopenapi-');
    writeFileSync(join(dir, 'users'), `${await passwdLine('ann', 'pw', 4)}\n`);
    gw = await startGateway({ Users: join(dir, 'users'), OpenAPIPublic: true, OpenAPIPath: 'docs/api.json' });
    const open = await request(`${gw.base}/docs/api.json`);
    expect(open.statusCode).to.equal(200);
    expect(((await open.body.json()) as Json).openapi).to.equal('3.1.0');
    const post = await request(`${gw.base}/docs/api.json`, { method: 'POST', body: '{}' });
    expect(post.statusCode).to.equal(405);
    expect(post.headers.allow).to.equal('GET');
    await post.body.dump();
    await gw.stop();
    gw = await startGateway({ OpenAPIPath: '' });
    const off = await request(`${gw.base}/openapi.json`);
    // no document: a GET is a request like any other (strict mode takes POST only)
    expect(off.statusCode).to.equal(400);
    await off.body.dump();
  });
});
