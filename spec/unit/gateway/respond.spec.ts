import { expect } from 'chai';
import type { IncomingMessage, Server } from 'node:http';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayResponse, HEAD_CARRIES_TRACEPARENT, send, sendResult } from '../../../actors/gateway/respond.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** The raw head lines of one answer from a server of GatewayResponses whose handler is `answer`. */
async function headOf(answer: (res: GatewayResponse) => void): Promise<{ status: number; raw: string[] }> {
  const server: Server = createServer({ ServerResponse: GatewayResponse }, (_req, res) => {
    const r = res as GatewayResponse;
    r.traceparent = TRACEPARENT;
    answer(r);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: (server.address() as AddressInfo).port, path: '/', agent: false },
        resolve,
      );
      req.on('error', reject).end();
    });
    res.resume();
    const raw: string[] = [];
    for (let i = 0; i < res.rawHeaders.length; i += 2)
      raw.push(`${res.rawHeaders[i]!.toLowerCase()}: ${res.rawHeaders[i + 1]!}`);
    return { status: res.statusCode!, raw };
  } finally {
    server.close();
  }
}

describe('actors/gateway/respond: the traceparent response header', () => {
  it('goes into the head as Node builds it on this Node (the unchecked path is the one taken)', () => {
    expect(HEAD_CARRIES_TRACEPARENT).to.equal(true);
  });

  it("is answered exactly once with send(), with a bare end() (Node's implicit head), and with writeHead given an object", async () => {
    const answers: Array<(res: GatewayResponse) => void> = [
      (res) => send(res, 201, '{"ok":true}', 'application/json'),
      (res) => {
        res.statusCode = 204;
        res.end();
      },
      (res) => res.writeHead(200, { 'x-other': 'y' }).end('done'),
    ];
    const statuses: number[] = [];
    for (const answer of answers) {
      const { status, raw } = await headOf(answer);
      statuses.push(status);
      expect(
        raw.filter((l) => l.startsWith('traceparent:')),
        raw.join('\n'),
      ).to.deep.equal([`traceparent: ${TRACEPARENT}`]);
    }
    expect(statuses).to.deep.equal([201, 204, 200]);
  });

  it('is left out of a response that has no traceparent, and the rest of the head is untouched', async () => {
    const server = createServer({ ServerResponse: GatewayResponse }, (_req, res) => send(res, 200, 'x', 'text/plain'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const res = await new Promise<IncomingMessage>((resolve, reject) =>
        request({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, agent: false }, resolve)
          .on('error', reject)
          .end(),
      );
      res.resume();
      expect(res.headers.traceparent).to.equal(undefined);
      expect(res.headers['content-type']).to.equal('text/plain');
      expect(res.headers['content-length']).to.equal('1');
    } finally {
      server.close();
    }
  });
});

describe('actors/gateway/respond: Retry-After on a 503', () => {
  it('a 503 Result carries Retry-After 1 unless the caller gave its own; other Codes carry none', async () => {
    const unavailable = { Code: 503, Message: 'no node serves channel jq yet', Data: {}, List: null };
    const heads = await Promise.all([
      headOf((res) => sendResult(res, unavailable)),
      headOf((res) => sendResult(res, unavailable, { 'retry-after': '5' })),
      headOf((res) => sendResult(res, { ...unavailable, Code: 404 })),
    ]);
    expect(heads.map((h) => [h.status, h.raw.filter((l) => l.startsWith('retry-after:'))])).to.deep.equal([
      [503, ['retry-after: 1']],
      [503, ['retry-after: 5']],
      [404, []],
    ]);
  });
});
