import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { request } from 'undici';
import type { InterceptorFunction, RunningInterceptor } from '../../actors/interceptor/server.js';
import { loadInterceptor, serveInterceptor } from '../../actors/interceptor/server.js';
import type { HiveNode } from '../../node/node.js';
import { startTestNode } from './helpers.js';
import { HIVENODE_ARGS } from '../support/hivenode-bin.js';
import { sleep } from '../support/wait.js';

const examples = new URL('../../examples/interceptors/', import.meta.url).pathname;

describe('gateway, interceptor mode', function () {
  this.timeout(30_000);
  let node: HiveNode | undefined;
  const servers: RunningInterceptor[] = [];
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  async function serve(fn: InterceptorFunction): Promise<string> {
    const s = await serveInterceptor(fn, 0);
    servers.push(s);
    return `http://127.0.0.1:${s.port}/`;
  }

  async function gateway(
    before: InterceptorFunction,
    after: InterceptorFunction,
    extra: Record<string, string | number | boolean> = {},
  ): Promise<string> {
    const [b, a] = await Promise.all([serve(before), serve(after)]);
    ({ node } = await startTestNode([
      { service: 'echo', NAME: 'echo' },
      { service: 'gateway', Port: 0, InterceptBefore: b, InterceptAfter: a, OUTPUTCHANNEL: 'echo', ...extra },
    ]));
    return `http://127.0.0.1:${node.services.find((s) => s.kind === 'gateway')!.running.status().port as number}`;
  }

  it('JSON pass-through pair: body → before → hive → after → response', async () => {
    const base = await gateway(
      await loadInterceptor(`${examples}json-before.mjs`),
      await loadInterceptor(`${examples}json-after.mjs`),
    );
    const res = await request(`${base}/orders/create`, {
      method: 'POST',
      body: JSON.stringify({ id: ['42'] }),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).to.equal(200);
    expect(await res.body.json()).to.deep.equal({ Code: 200, Message: 'Success', Data: { id: ['42'] }, List: [] });
  });

  it('text and XML bodies reach the before interceptor as type text', async () => {
    const seen: string[] = [];
    const textBefore = await loadInterceptor(`${examples}text-before.mjs`);
    const base = await gateway(
      (type, value, options) => {
        seen.push(type);
        return textBefore(type, value, options);
      },
      await loadInterceptor(`${examples}json-after.mjs`),
    );
    const xml = await request(`${base}/doc/in`, {
      method: 'POST',
      body: '<doc><a>1</a><a>2</a><b>x</b></doc>',
      headers: { 'content-type': 'application/xml' },
    });
    expect(((await xml.body.json()) as { Data: unknown }).Data).to.deep.equal({ a: ['1', '2'], b: ['x'] });
    const text = await request(`${base}/doc/in`, {
      method: 'POST',
      body: 'plain words',
      headers: { 'content-type': 'text/plain' },
    });
    expect(((await text.body.json()) as { Data: unknown }).Data).to.deep.equal({ text: ['plain words'] });
    expect(seen).to.deep.equal(['text', 'text']);
  });

  it('a before status outside 200-299 stops processing and returns that status and text; nothing reaches the hive', async () => {
    const base = await gateway(
      await loadInterceptor(`${examples}json-before.mjs`),
      await loadInterceptor(`${examples}json-after.mjs`),
    );
    const res = await request(`${base}/a/b`, {
      method: 'POST',
      body: 'not json',
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.statusCode).to.equal(400);
    expect(await res.body.text()).to.equal('Not supported type');
    expect(node!.hive.stats().calls).to.equal(0);
  });

  it('the before interceptor reads options.http_request to restrict methods', async () => {
    const base = await gateway(
      (_t, value, options) => {
        const req = JSON.parse(options.http_request!) as {
          method: string;
          path: string;
          headers: Record<string, string>;
        };
        if (req.method !== 'PUT') return { data: null, status: 'Only PUT here', status_code: 405 };
        if ('authorization' in req.headers) return { data: null, status: 'credentials leaked', status_code: 500 };
        return { data: { Class: 'c', Operation: 'o', Data: value }, status: 'OK', status_code: 200 };
      },
      (_t, value) => ({ data: value, status: 'OK', status_code: 200 }),
    );
    const denied = await request(`${base}/x`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(denied.statusCode).to.equal(405);
    expect(await denied.body.text()).to.equal('Only PUT here');
    const ok = await request(`${base}/x`, {
      method: 'PUT',
      body: JSON.stringify({ k: ['v'] }),
      headers: { 'content-type': 'application/json', authorization: 'Basic eDp5' },
    });
    expect(ok.statusCode).to.equal(200);
    await ok.body.dump();
  });

  it('the after interceptor sets the real status and response headers (http_response_headers), and may abort', async () => {
    const base = await gateway(
      (_t, value) => ({ data: { Class: 'c', Operation: 'o', Data: value }, status: 'OK', status_code: 200 }),
      (_t, value, options) => {
        const result = value as { Data: { mode?: string[] } };
        const headers = JSON.parse(options.http_response_headers!) as Record<string, string>;
        if (result.Data.mode?.[0] === 'abort')
          return { data: null, status: 'Refused after the fact', status_code: 409 };
        headers['content-type'] = 'text/csv';
        headers['x-mapped'] = 'yes';
        // not the answer's: each answer carries its own request's trace
        headers.Traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
        return {
          data: 'a,b\n1,2\n',
          status: 'Created',
          status_code: 201,
          options: { http_response_headers: JSON.stringify(headers) },
        };
      },
      { ResponseHeaders: 'X-Base: 1' },
    );
    const res = await request(`${base}/x`, {
      method: 'POST',
      body: JSON.stringify({ mode: ['csv'] }),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).to.equal(201);
    expect(res.headers['content-type']).to.equal('text/csv');
    expect(res.headers['x-mapped']).to.equal('yes');
    expect(res.headers['x-base']).to.equal('1');
    expect(res.headers.traceparent).to.be.a('string').and.not.contain('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(await res.body.text()).to.equal('a,b\n1,2\n');
    const aborted = await request(`${base}/x`, {
      method: 'POST',
      body: JSON.stringify({ mode: ['abort'] }),
      headers: { 'content-type': 'application/json' },
    });
    expect(aborted.statusCode).to.equal(409);
    expect(await aborted.body.text()).to.equal('Refused after the fact');
  });

  it('data not in protocol form from the before interceptor is refused with 400; a broken interceptor gives 502', async () => {
    const base = await gateway(
      (_t, value) => {
        if ((value as { boom?: unknown }).boom) throw new Error('mapper bug');
        return { data: value, status: 'OK', status_code: 200 };
      },
      (_t, value) => ({ data: value, status: 'OK', status_code: 200 }),
    );
    const refused = await request(`${base}/x`, {
      method: 'POST',
      body: JSON.stringify({ Data: { a: 'not a list' } }),
      headers: { 'content-type': 'application/json' },
    });
    expect(refused.statusCode).to.equal(400);
    expect(((await refused.body.json()) as { Message: string }).Message).to.contain('refused by the hive');
    const broken = await request(`${base}/x`, {
      method: 'POST',
      body: JSON.stringify({ boom: true }),
      headers: { 'content-type': 'application/json' },
    });
    expect(broken.statusCode).to.equal(502);
    await broken.body.dump();
  });

  it('`hivenode interceptor <module> -Port=N` serves a mapping function as a process', async () => {
    const child = spawn(process.execPath, [...HIVENODE_ARGS, 'interceptor', `${examples}json-after.mjs`, '-Port=0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      const end = Date.now() + 15_000;
      while (!/serving on (http:\/\/\S+)/.test(out) && Date.now() < end) await sleep(50);
      const url = /serving on (http:\/\/\S+)/.exec(out)![1]!;
      const res = await request(url, {
        method: 'POST',
        body: JSON.stringify({ type: 'json', value: { Code: 202, Message: 'x', Data: {}, List: [] }, options: {} }),
      });
      expect(await res.body.json()).to.deep.include({ status: 'x', status_code: 202 });
      const bad = await request(url, { method: 'POST', body: '{"type": 5}' });
      expect(bad.statusCode).to.equal(400);
      await bad.body.dump();
    } finally {
      child.kill('SIGTERM');
    }
  });
});
