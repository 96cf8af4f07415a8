import { expect } from 'chai';
import type { RunningInterceptor } from '../../actors/interceptor/server.js';
import { serveInterceptor } from '../../actors/interceptor/server.js';

/**
 * The kit's answers, whether the mapping function answers at once or through a thenable: a function
 * that fails in any way is answered, never a crash of the server (it keeps answering afterwards).
 */
describe('interceptor kit: the answer of each kind of mapping function', () => {
  let kit: RunningInterceptor;

  before(async () => {
    kit = await serveInterceptor((type, value, options) => {
      const mode = options.mode ?? '';
      const out = { data: value, status: 'OK', status_code: 200, options: { type } };
      switch (mode) {
        case 'async':
          return Promise.resolve(out);
        case 'throws':
          throw new Error('mapper bug');
        case 'rejects':
          return Promise.reject(new Error('async mapper bug'));
        case 'bad-then':
          return {
            then() {
              throw new Error('then threw');
            },
          };
        case 'malformed':
          return { status_code: 'x' };
        case 'not-json':
          return { data: 1n, status: 'OK', status_code: 200 };
        default:
          return out;
      }
    }, 0);
  });

  after(() => kit.close());

  async function post(
    mode: string,
    body?: string,
  ): Promise<{
    status: number;
    reply: { data?: unknown; status?: string; status_code?: number; options?: Record<string, string> };
  }> {
    const res = await fetch(`http://127.0.0.1:${kit.port}/`, {
      method: 'POST',
      body: body ?? JSON.stringify({ type: 'json', value: { a: ['1'] }, options: { mode } }),
      headers: { 'content-type': 'application/json' },
    });
    return { status: res.status, reply: (await res.json()) as never };
  }

  it('a synchronous and an asynchronous function are answered 200 with their result', async () => {
    for (const mode of ['', 'async']) {
      const { status, reply } = await post(mode);
      expect(status, mode).to.equal(200);
      expect(reply).to.deep.equal({ data: { a: ['1'] }, status: 'OK', status_code: 200, options: { type: 'json' } });
    }
  });

  it('a function that throws, rejects or returns a thenable whose then throws is answered 500 with its message', async () => {
    for (const [mode, text] of [
      ['throws', 'mapper bug'],
      ['rejects', 'async mapper bug'],
      ['bad-then', 'then threw'],
    ] as const) {
      const { status, reply } = await post(mode);
      expect(status, mode).to.equal(500);
      expect(reply.status, mode).to.contain(text);
    }
  });

  it('a malformed request or result is answered 400; a result that is not JSON 500; the kit answers on', async () => {
    expect((await post('', '{not json')).status).to.equal(400);
    expect((await post('malformed')).status).to.equal(400);
    expect((await post('not-json')).status).to.equal(500);
    expect((await post('')).status).to.equal(200);
  });
});
