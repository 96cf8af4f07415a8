import { expect } from 'chai';
import type { Head } from '../../../actors/shared/http1-parser.js';
import { Http1Parser, HttpParseError } from '../../../actors/shared/http1-parser.js';

/**
 * The HTTP/1.x parser of the lean interceptor wire: the same bytes give the same messages whether
 * they come in one read or one byte at a time (a network may cut anywhere), and what cannot be
 * framed with certainty is an HttpParseError.
 */
type Parsed = Array<{ head: Head; body: string }>;

function parse(kind: 'request' | 'response', bytes: string, split: 'whole' | 'bytes', maxBody = 1024): Parsed {
  const out: Parsed = [];
  const parser = new Http1Parser(kind, maxBody, { onMessage: (head, body) => out.push({ head, body: body.toString('latin1') }) });
  const data = Buffer.from(bytes, 'latin1');
  if (split === 'whole') parser.execute(data);
  else for (let i = 0; i < data.length; i++) parser.execute(data.subarray(i, i + 1));
  const cut = parser.end();
  if (cut) throw new HttpParseError(cut);
  return out;
}

function both(kind: 'request' | 'response', bytes: string): Parsed {
  const whole = parse(kind, bytes, 'whole');
  expect(parse(kind, bytes, 'bytes')).to.deep.equal(whole);
  return whole;
}

describe('HTTP/1.x parser (lean interceptor wire)', () => {
  it('reads content-length, chunked (extensions, trailers) and pipelined responses, in one read or byte by byte', () => {
    const replies = both(
      'response',
      'HTTP/1.1 200 OK\r\nContent-Type: a\r\nCONTENT-LENGTH: 5\r\nKeep-Alive: timeout=7\r\n\r\nhello' +
        'HTTP/1.1 201 Created\r\ntransfer-encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nx-trailer: 1\r\n\r\n' +
        'HTTP/1.1 204 No Content\r\n\r\n',
    );
    expect(replies.map((r) => [r.head.status, r.body, r.head.close])).to.deep.equal([
      [200, 'hello', false],
      [201, 'abcde', false],
      [204, '', false],
    ]);
    expect(replies[0]!.head.keepAliveMs).to.equal(7000);
  });

  it('reads bare-LF lines, 1xx interim responses, HTTP/1.0 and a body that runs to the close', () => {
    const replies = both('response', 'HTTP/1.1 100 Continue\n\nHTTP/1.1 200 OK\nContent-Length: 2\n\nok' + 'HTTP/1.0 200 OK\r\n\r\nto the end');
    expect(replies.map((r) => [r.head.status, r.body, r.head.close])).to.deep.equal([
      [100, '', false],
      [200, 'ok', false],
      [200, 'to the end', true],
    ]);
  });

  it('an HTTP/1.0 reply closes unless it keeps alive; Connection: close and both framings close too', () => {
    expect(both('response', 'HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n')[0]!.head.close).to.equal(false);
    expect(both('response', 'HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n')[0]!.head.close).to.equal(true);
    const mixed = both('response', 'HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n')[0]!;
    expect([mixed.body, mixed.head.close]).to.deep.equal(['x', true]);
  });

  it('reads requests: chunked bodies, Expect, Host, methods; one stray CRLF between requests is skipped', () => {
    const requests = both('request', 'POST /a HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}\r\n' + 'GET /b?c=1 HTTP/1.1\r\nhost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n'.replace('gzip, ', ''));
    expect(requests.map((r) => [r.head.method, r.head.target, r.head.expectContinue, r.body])).to.deep.equal([
      ['POST', '/a', true, '{}'],
      ['GET', '/b?c=1', false, ''],
    ]);
  });

  const malformed: Array<[string, 'request' | 'response', string, RegExp]> = [
    ['a status line of HTTP/2', 'response', 'HTTP/2 200 OK\r\n\r\n', /status line/],
    ['a status below 100', 'response', 'HTTP/1.1 099 x\r\nContent-Length: 0\r\n\r\n', /status 99/],
    ['a 101 nobody asked for', 'response', 'HTTP/1.1 101 Switching Protocols\r\n\r\n', /101/],
    ['lengths that disagree', 'response', 'HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\nx', /disagree/],
    ['a chunk longer than its size', 'response', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxy\r\n0\r\n\r\n', /longer than its size/],
    ['a bare CR', 'response', 'HTTP/1.1 200 OK\rX: y\r\nContent-Length: 0\r\n\r\n', /bare CR/],
    ['a space before the colon', 'request', 'POST / HTTP/1.1\r\nHost: h\r\nContent-Length : 1\r\n\r\nx', /not a token/],
    ['a folded request header', 'request', 'POST / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n', /folded/],
    ['a request TE not ending in chunked', 'request', 'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n', /does not end in chunked/],
    ['two Hosts', 'request', 'POST / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', /more than one Host/],
    ['a body cut by the close', 'response', 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc', /before the body was complete/],
  ];
  for (const [what, kind, bytes, problem] of malformed) {
    it(`${what}: an HttpParseError`, () => {
      for (const split of ['whole', 'bytes'] as const) expect(() => parse(kind, bytes, split), split).to.throw(HttpParseError, problem);
    });
  }

  it('a body or head over the limit is an HttpParseError marked too large', () => {
    for (const bytes of ['HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n', `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${'400\r\n'}${'x'.repeat(1024)}\r\n1\r\n`, `HTTP/1.1 200 OK\r\nX: ${'y'.repeat(70 * 1024)}`]) {
      try {
        parse('response', bytes, 'whole');
        expect.fail('expected a failure');
      } catch (e) {
        expect(e).to.be.instanceOf(HttpParseError);
        expect((e as HttpParseError).tooLarge).to.equal(true);
      }
    }
  });
});
