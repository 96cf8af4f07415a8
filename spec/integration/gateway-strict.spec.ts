import { expect } from 'chai';
import { request } from 'undici';
import type { HiveNode } from '../../node/node.js';
import { startTestNode } from './helpers.js';

type Entry = { service: 'echo' | 'gateway' } & Record<string, string | number | boolean>;

async function gatewayNode(
  gateway: Record<string, string | number | boolean>,
  extra: Entry[] = [{ service: 'echo', NAME: 'echo' }],
): Promise<{ node: HiveNode; base: string }> {
  const { node } = await startTestNode([
    ...extra,
    { service: 'gateway', NAME: 'gw', Port: 0, Strict: true, OUTPUTCHANNEL: 'echo', ...gateway },
  ]);
  const port = node.services.find((s) => s.kind === 'gateway')!.running.status().port as number;
  return { node, base: `http://127.0.0.1:${port}` };
}

async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown>; headers: Record<string, string | string[] | undefined> }> {
  const res = await request(url, {
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });
  const text = await res.body.text();
  return {
    status: res.statusCode,
    json: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    headers: res.headers,
  };
}

describe('gateway, strict mode', () => {
  let node: HiveNode | undefined;
  afterEach(async () => {
    await node?.stop(2000);
    node = undefined;
  });

  it('POST /<class>/<operation> with JSON Data reaches the service; the Result is the body and its Code the status', async () => {
    let base: string;
    ({ node, base } = await gatewayNode({ ControlAllowList: 'platform-break' }));
    const r = await post(`${base}/sql/select`, { id: ['7'] });
    expect(r.status).to.equal(200);
    expect(r.json).to.deep.equal({ Code: 200, Message: 'Success', Data: { id: ['7'] }, List: [] });
    const preview = await post(`${base}/sql/select`, { id: ['7'] }, { 'platform-break': 'true' });
    expect(preview.json).to.deep.include({ Class: 'sql', Operation: 'select' });
  });

  it('accepts a Class/Operation/Data message; the path wins, then the body, then DefaultClass/DefaultOperation', async () => {
    let base: string;
    ({ node, base } = await gatewayNode({
      ControlAllowList: 'platform-break',
      DefaultClass: 'dc',
      DefaultOperation: 'do',
    }));
    const h = { 'platform-break': 'true' };
    expect(
      (await post(`${base}/`, { Class: 'queue', Operation: 'action', Data: { a: ['1'] } }, h)).json,
    ).to.deep.include({ Class: 'queue', Operation: 'action', Data: { a: ['1'] } });
    expect((await post(`${base}/p1/p2`, { Class: 'queue', Operation: 'action', Data: {} }, h)).json).to.deep.include({
      Class: 'p1',
      Operation: 'p2',
    });
    expect((await post(`${base}/`, { a: ['1'] }, h)).json).to.deep.include({ Class: 'dc', Operation: 'do' });
    expect((await post(`${base}/only`, {}, h)).json).to.deep.include({ Class: 'only', Operation: 'do' });
  });

  it('refuses bad bodies with 400 naming the problem, and non-POST methods', async () => {
    let base: string;
    ({ node, base } = await gatewayNode({}));
    const wrongType = await post(`${base}/a/b`, { id: [1] });
    expect(wrongType.status).to.equal(400);
    expect(wrongType.json.Message).to.equal('request body.id[0] must be a string, got number');
    const bad = await post(`${base}/a/b`, '{"id": [');
    expect(bad.status).to.equal(400);
    expect(bad.json.Message).to.match(/^request body is not valid JSON: /);
    const proto = await post(`${base}/a/b`, '{"__proto__": ["x"]}');
    expect(proto.status).to.equal(400);
    const get = await request(`${base}/a/b`);
    expect(get.statusCode).to.equal(400);
    await get.body.dump();
    expect((await post(`${base}/a/b/c`, {})).status).to.equal(400);
  });

  it('answers the health check on GET only, with the hive state', async () => {
    let base: string;
    ({ node, base } = await gatewayNode({ BasePath: '/api', HealthcheckPath: 'health' }));
    const ok = await request(`${base}/api/health`);
    expect(ok.statusCode).to.equal(200);
    expect(await ok.body.json()).to.deep.equal({ status: 'ok', hive: 'connected' });
    const post405 = await request(`${base}/api/health`, { method: 'POST', body: '{}' });
    expect(post405.statusCode).to.equal(405);
    await post405.body.dump();
    const outside = await request(`${base}/elsewhere`, { method: 'POST', body: '{}' });
    expect(outside.statusCode).to.equal(404);
    await outside.body.dump();
    expect((await post(`${base}/api/x/y`, { a: ['1'] })).status).to.equal(200);
  });

  it('routes class[/operation] to channels, the most specific entry winning, else OUTPUTCHANNEL', async () => {
    let base: string;
    ({ node, base } = await gatewayNode({ Routes: 'sql/select=sqlsel; sql=sqlall;cmd=exec1', OUTPUTCHANNEL: 'main' }, [
      { service: 'echo', NAME: 'sqlsel', ReplyCode: 201 },
      { service: 'echo', NAME: 'sqlall', ReplyCode: 202 },
      { service: 'echo', NAME: 'main', ReplyCode: 203 },
    ]));
    expect((await post(`${base}/sql/select`, {})).status).to.equal(201);
    expect((await post(`${base}/SQL/insert`, {})).status).to.equal(202);
    expect((await post(`${base}/other/op`, {})).status).to.equal(203);
    const unserved = await post(`${base}/cmd/exec`, {});
    expect(unserved.status).to.equal(404);
    expect(unserved.json.Message).to.contain("'exec1'");
  });

  it('takes controls from allowed headers and _-prefixed Data fields (which win), as the queue calls do; a prefixed field the allow list does not name is 403', async () => {
    let base: string;
    ({ node, base } = await gatewayNode({
      ControlAllowList: 'platform-break;Channel, command, groupby, list',
      ControlPrefix: '_',
    }));
    // a prefixed Data field is a control: the allow list holds it as it holds a header
    const refused = await post(
      `${base}/queue/action`,
      { Data: { item: ['a'], _requeue_timer: ['100000000000000'] } },
      {},
    );
    expect(refused.status).to.equal(403);
    expect(refused.json.Message).to.equal(
      "control '_requeue_timer' is not allowed: ControlAllowList does not name 'requeue_timer'",
    );
    const r = await post(
      `${base}/queue/action`,
      {
        Class: 'queue',
        Operation: 'action',
        Data: { item: ['a'], _command: ['list'], _groupby: ['channel'], _list: ['main'] },
      },
      {
        'platform-break': 'true',
        channel: 'from-header',
        command: 'status',
        'x-not-allowed': 'dropped',
      },
    );
    expect(r.json.Data).to.deep.equal({ item: ['a'] });
    // and the trace the gateway adds itself, the one it answers with
    expect(r.json.Control).to.deep.equal({
      'platform-break': ['true'],
      channel: ['from-header'],
      command: ['list'],
      groupby: ['channel'],
      list: ['main'],
      traceparent: [r.headers.traceparent],
    });
  });

  it('controls inside a message-shaped body pass the same allow list as headers', async () => {
    let base: string;
    ({ node, base } = await gatewayNode({ ControlAllowList: 'platform-break,command' }));
    const r = await post(
      `${base}/q/a`,
      { Data: {}, Control: { command: ['list'], secret_switch: ['on'], Authorization: ['x'] } },
      { 'platform-break': 'true' },
    );
    expect(r.json.Control).to.deep.equal({
      command: ['list'],
      'platform-break': ['true'],
      traceparent: [r.headers.traceparent],
    });
  });

  it('without platform-break in the allow list the header is ignored and the message is sent', async () => {
    let base: string;
    ({ node, base } = await gatewayNode({}));
    const r = await post(`${base}/a/b`, { a: ['1'] }, { 'platform-break': 'true' });
    expect(r.json).to.deep.include({ Code: 200, Message: 'Success' });
  });

  it('Platform-Procedure: Execution hands over with acknowledged delivery and answers at once', async () => {
    let base: string;
    ({ node, base } = await gatewayNode({}, [{ service: 'echo', NAME: 'echo', Delay: '3s' }]));
    const r = await post(`${base}/syslog/send`, { info: ['hello'] }, { 'Platform-Procedure': 'Execution' });
    expect(r.status).to.equal(200);
    expect(r.json).to.deep.equal({ Code: 200, Message: 'Success', Data: {}, List: null });
    expect(
      node.services.find((s) => s.kind === 'echo')!.running.status().inFlight,
      'answered while the echo still works on it (3 s)',
    ).to.equal(1);
  });

  it('a hive call that outlives RequestTimeout is answered 504', async () => {
    let base: string;
    ({ node, base } = await gatewayNode({ RequestTimeout: '300ms' }, [{ service: 'echo', NAME: 'echo', Delay: '2s' }]));
    const started = Date.now();
    const r = await post(`${base}/a/b`, {});
    expect(r.status).to.equal(504);
    // not before RequestTimeout; the 504 itself shows it did not wait for the 2 s answer
    expect(Date.now() - started).to.be.within(300, 3000);
  });

  it('DevMode passes every control (never credentials) and adds the four CORS headers; ResponseHeaders go on every response', async () => {
    let base: string;
    ({ node, base } = await gatewayNode({ DevMode: true, ResponseHeaders: 'X-Served-By: hivenode\r\nX-Env: test' }));
    const r = await post(
      `${base}/a/b`,
      {},
      { 'platform-break': 'true', 'x-anything': 'v', authorization: 'Basic dTpw' },
    );
    expect(r.headers['access-control-allow-origin']).to.equal('*');
    expect(r.headers['access-control-allow-credentials']).to.equal('true');
    expect(r.headers['access-control-allow-methods']).to.equal('*');
    expect(r.headers['access-control-allow-headers']).to.equal('*');
    expect(r.headers['x-served-by']).to.equal('hivenode');
    expect(r.headers['x-env']).to.equal('test');
    expect(r.json.Control).to.have.property('x-anything');
    expect(r.json.Control).to.not.have.property('authorization');
  });

  it('refuses to start in non-strict mode without both interceptors', async () => {
    const err = await gatewayNode({ Strict: false }).catch((e: unknown) => e);
    expect((err as Error).message).to.contain('InterceptBefore and InterceptAfter are mandatory');
  });
});
