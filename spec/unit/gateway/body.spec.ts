import { expect } from 'chai';
import type { IncomingMessage } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { bodyIfArrived, readBody } from '../../../actors/gateway/body.js';

/**
 * Sends `head` and `body` as raw HTTP (one write, or the body `later` ms after the head) to a server
 * that hands the request to `take` once the turn that parsed its head is over (as the gateway's actor
 * takes it), and resolves with what `take` returned.
 */
async function served<T>(
  head: string,
  body: string,
  later: number | undefined,
  take: (req: IncomingMessage) => Promise<T>,
): Promise<T> {
  let result!: Promise<T>;
  const server = createServer((req, res) => {
    queueMicrotask(() => {
      result = take(req);
      void result.finally(() => res.end('ok'));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  try {
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    if (later === undefined) socket.write(head + body);
    else {
      socket.write(head);
      setTimeout(() => socket.write(body), later);
    }
    await new Promise<void>((r) => socket.once('data', () => r()));
    socket.destroy();
    return await result;
  } finally {
    server.close();
  }
}

const post = (body: string): string =>
  `POST /x HTTP/1.1\r\nhost: a\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`;

describe('gateway body: taken at once when it came with the head', () => {
  it('gives the body that arrived with the head, whole, without waiting for events', async () => {
    const body = '{"id":["42"],"name":["bench"]}';
    const got = await served(post(body), body, undefined, async (req) => bodyIfArrived(req, 1024)?.toString());
    expect(got).to.equal(body);
  });

  it('gives the empty body of a request without one', async () => {
    const got = await served(post(''), '', undefined, async (req) => bodyIfArrived(req, 1024)?.length);
    expect(got).to.equal(0);
  });

  it('leaves a body still on its way to readBody, which reads it whole', async () => {
    const body = '{"a":["b"]}';
    const got = await served(
      post(body),
      body,
      50,
      async (req) => [bodyIfArrived(req, 1024), (await readBody(req, 1024)).toString()] as const,
    );
    expect(got[0]).to.equal(undefined);
    expect(got[1]).to.equal(body);
  });

  it('leaves a body over the cap to readBody, which refuses it with 413', async () => {
    const body = 'x'.repeat(100);
    const got = await served(post(body), body, undefined, async (req) => {
      const now = bodyIfArrived(req, 10);
      const code = await readBody(req, 10).then(
        () => 0,
        (e: { code?: number }) => e.code,
      );
      return [now, code] as const;
    });
    expect(got).to.deep.equal([undefined, 413]);
  });
});
