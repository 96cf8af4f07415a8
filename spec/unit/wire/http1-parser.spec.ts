import { expect } from 'chai';
import type { Head } from '../../../actors/wire/http1-parser.js';
import { Http1Parser, HttpParseError } from '../../../actors/wire/http1-parser.js';

/**
 * The HTTP/1.x parser of the lean interceptor wire: the same bytes give the same messages whether
 * they come in one read or one byte at a time (a network may cut anywhere), and what cannot be
 * framed with certainty is an HttpParseError.
 */
type Parsed = Array<{ head: Head; body: string }>;

function parse(kind: 'request' | 'response', bytes: string, split: 'whole' | 'bytes', maxBody = 1024): Parsed {
  const out: Parsed = [];
  const parser = new Http1Parser(kind, maxBody, {
    onMessage: (head, body) => out.push({ head, body: body.toString('latin1') }),
  });
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

  it('reads 1xx interim responses, HTTP/1.0 and a body that runs to the close', () => {
    const replies = both(
      'response',
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok' +
        'HTTP/1.0 200 OK\r\n\r\nto the end',
    );
    expect(replies.map((r) => [r.head.status, r.body, r.head.close])).to.deep.equal([
      [100, '', false],
      [200, 'ok', false],
      [200, 'to the end', true],
    ]);
  });

  it('an HTTP/1.0 reply closes unless it keeps alive; Connection: close closes too', () => {
    expect(
      both('response', 'HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n')[0]!.head.close,
    ).to.equal(false);
    expect(
      both('response', 'HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n')[0]!.head.close,
    ).to.equal(true);
  });

  it('reads what llhttp reads alike: chunk extensions (quoted too), OWS around a length, a lone coding list ending in chunked', () => {
    const replies = both(
      'response',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3;a=b;c="x; y"\r\nabc\r\n0;z\r\nX-T: v\r\n\r\n' +
        'HTTP/1.1 200 OK\r\nContent-Length:\t2 \r\n\r\nde',
    );
    expect(replies.map((r) => r.body)).to.deep.equal(['abc', 'de']);
  });

  it('reads requests: chunked bodies, Expect, Host, methods; one stray CRLF between requests is skipped', () => {
    const requests = both(
      'request',
      'POST /a HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}\r\n' +
        'GET /b?c=1 HTTP/1.1\r\nhost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n'.replace('gzip, ', ''),
    );
    expect(requests.map((r) => [r.head.method, r.head.target, r.head.expectContinue, r.body])).to.deep.equal([
      ['POST', '/a', true, '{}'],
      ['GET', '/b?c=1', false, ''],
    ]);
  });

  const malformed: Array<[string, 'request' | 'response', string, RegExp]> = [
    ['a status line of HTTP/2', 'response', 'HTTP/2 200 OK\r\n\r\n', /status line/],
    ['a status below 100', 'response', 'HTTP/1.1 099 x\r\nContent-Length: 0\r\n\r\n', /status 99/],
    ['a 101 nobody asked for', 'response', 'HTTP/1.1 101 Switching Protocols\r\n\r\n', /101/],
    ['lengths that disagree', 'response', 'HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\nx', /not a length/],
    [
      'a chunk longer than its size',
      'response',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxy\r\n0\r\n\r\n',
      /longer than its size/,
    ],
    ['a bare CR', 'response', 'HTTP/1.1 200 OK\rX: y\r\nContent-Length: 0\r\n\r\n', /bare CR/],
    ['a space before the colon', 'request', 'POST / HTTP/1.1\r\nHost: h\r\nContent-Length : 1\r\n\r\nx', /not a token/],
    ['a folded request header', 'request', 'POST / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n', /folded/],
    [
      'a request TE not ending in chunked',
      'request',
      'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n',
      /does not end in chunked/,
    ],
    ['two Hosts', 'request', 'POST / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', /more than one Host/],
    [
      'a body cut by the close',
      'response',
      'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc',
      /before the body was complete/,
    ],
  ];
  for (const [what, kind, bytes, problem] of malformed) {
    it(`${what}: an HttpParseError`, () => {
      for (const split of ['whole', 'bytes'] as const)
        expect(() => parse(kind, bytes, split), split).to.throw(HttpParseError, problem);
    });
  }

  // each found by the differential fuzzer (spec/fuzz/http1-differential.ts, `make fuzz`): bytes the
  // parser once read as a message that llhttp refuses or frames otherwise, a request smuggled past
  // a strict front end or a reply read at the wrong boundary
  const smuggling: Array<[string, 'request' | 'response', string, RegExp]> = [
    [
      'a bare LF ending the head (llhttp: invalid header token)',
      'response',
      'HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\nedd',
      /bare LF/,
    ],
    ['bare-LF lines (llhttp: missing CR)', 'response', 'HTTP/1.1 200 OK\nContent-Length: 2\n\nok', /bare LF/],
    [
      'a bare LF after chunk data (llhttp: CR expected)',
      'response',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\n0\r\n\r\n',
      /longer than its size/,
    ],
    [
      'a bare-LF chunk size line',
      'request',
      'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\nok\r\n0\r\n\r\n',
      /bare LF/,
    ],
    [
      "'chunked,' (llhttp: a request refused, a reply read to the close, not as chunks)",
      'response',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked,\r\nConnection: close\r\n\r\n2\r\ngf\r\n0;\r\n\r\n',
      /not a list of codings/,
    ],
    [
      "'chunked,' in a request",
      'request',
      'GET /call HTTP/1.1\r\ntransfer-encoding: chunked,\r\nHost: h\r\n\r\n0\r\n\r\n',
      /not a list of codings/,
    ],
    [
      'chunked twice (llhttp: invalid transfer-encoding)',
      'request',
      'POST /call HTTP/1.1\r\nHost: h\r\ntransfer-encoding: chunked\r\nTransfer-Encoding: CHUNKED\r\n\r\n2\r\nbb\r\n0\r\n\r\n',
      /chunked before another coding/,
    ],
    [
      'both framings in a reply (llhttp: refused)',
      'response',
      'HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n',
      /both Transfer-Encoding and Content-Length/,
    ],
    [
      'a length given twice, equal (llhttp: unexpected content-length)',
      'request',
      'GET /call HTTP/1.1\r\nHost: h\r\nContent-Length: 9\r\ncontent-length:\t9\r\n\r\nbaddchcgd',
      /more than one Content-Length/,
    ],
    [
      "a length list '5, 5' (llhttp: invalid content-length)",
      'response',
      'HTTP/1.1 204 No Content\r\nContent-Length:  5, 5\r\n\r\n',
      /not a length/,
    ],
    [
      'a tab after a length (llhttp: invalid content-length)',
      'response',
      'HTTP/1.1 200 OK\r\ncontent-length:  5\t\r\n\r\nfgcad',
      /not a length/,
    ],
    [
      'a tab after chunked (llhttp: invalid transfer-encoding)',
      'request',
      'POST /call HTTP/1.1\r\nHost: h\r\ntransfer-encoding: chunked\t\r\n\r\n0\r\n\r\n',
      /tab/,
    ],
    [
      'a control byte in a chunk extension (llhttp: strict)',
      'response',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6;a=\x01\r\nhbbchf\r\n0\r\n\r\n',
      /chunk size line/,
    ],
    [
      'a space before a chunk extension (llhttp: invalid chunk size)',
      'response',
      'HTTP/1.1 200\r\ntransfer-encoding: chunked\r\n\r\n0 ;a=b\r\n\r\n',
      /chunk size line/,
    ],
    [
      'a bare CR in a trailer (llhttp: LF expected)',
      'request',
      'POST /call HTTP/1.1\r\nTransfer-Encoding: chunked\r\nHost: h\r\n\r\n0\r\nX-T: a\rb\r\n\r\n',
      /trailer line/,
    ],
    [
      'a folded first header of a reply (llhttp: unexpected space)',
      'response',
      'HTTP/1.1 200 OK\r\n Content-Length:a\tb\r\n\r\n',
      /folded/,
    ],
    [
      'a method llhttp does not know',
      'request',
      'POST /call HTTP/1.1\r\nHost: h\r\n\r\nfbaGET /call HTTP/1.1\r\nHost: h\r\n\r\n',
      /request line/,
    ],
    ['a method llhttp does not know, in capitals', 'request', 'FETCH /call HTTP/1.1\r\nHost: h\r\n\r\n', /method/],
    ['a lower-case method', 'request', 'get /call HTTP/1.1\r\nHost: h\r\n\r\n', /request line/],
    [
      'CONNECT with a length (llhttp: a tunnel, no body)',
      'request',
      'CONNECT /call HTTP/1.1\r\nCONTENT-LENGTH:  1\r\nHost: h\r\n\r\nh',
      /method/,
    ],
    [
      'an authority-form target outside CONNECT (llhttp: invalid URL)',
      'request',
      'POST h:443 HTTP/1.1\r\nHost: h\r\n\r\n',
      /request line/,
    ],
    [
      'a quote in an absolute-form host (llhttp: invalid URL)',
      'request',
      'POST http://"h/x HTTP/1.1\r\nCONTENT-LENGTH:\t10\r\nHost: h\r\n\r\nbfdffbedef',
      /request line/,
    ],
    [
      'a backslash in an absolute-form host (llhttp: invalid URL)',
      'request',
      'POST http://h\\x HTTP/1.1\r\nHost: h\r\nCONTENT-LENGTH: 9\r\n\r\ngcfeaacea',
      /request line/,
    ],
    [
      'a DEL in the target (llhttp: invalid URL)',
      'request',
      'GET /\x7f HTTP/1.1\r\nHost: h\r\nContent-Length:  0\r\n\r\n',
      /control byte/,
    ],
    [
      'an Upgrade request (llhttp: reads nothing more after it)',
      'request',
      'POST /call HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: websocket\r\nHost: h\r\nContent-Length: 2\r\n\r\ndePOST /call HTTP/1.1\r\nHost: h\r\n\r\n',
      /upgrade/,
    ],
    [
      'Connection: close in a trailer (llhttp: closed connection after it)',
      'request',
      'POST /call HTTP/1.1\r\ntransfer-encoding: chunked\r\nHost: h\r\n\r\n3\r\nhae\r\n0\r\nConnection: close\r\n\r\nPOST /call HTTP/1.1\r\nHost: h\r\n\r\n',
      /trailer that frames/,
    ],
    [
      'a Content-Length in a trailer (llhttp: invalid content-length)',
      'response',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nConnection: close\r\n\r\n0\r\nContent-Length:  a \r\n\r\n',
      /trailer that frames/,
    ],
    [
      'a 1xx with a length (llhttp: a 110 has a body, a 100 none)',
      'response',
      'HTTP/1.1 110 Continue\r\nCONTENT-LENGTH:1\r\n\r\nfHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n',
      /110 reply with a Content-Length/,
    ],
    [
      'a 1xx other than 100, 102, 103 (llhttp: read to the close)',
      'response',
      'HTTP/1.1 199 X\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n',
      /1xx this wire does not know/,
    ],
    [
      'a control byte in a header value (llhttp: invalid header token)',
      'request',
      'GET / HTTP/1.1\r\nHost: h\r\nX: a\x01b\r\n\r\n',
      /control byte/,
    ],
  ];
  for (const [what, kind, bytes, problem] of smuggling) {
    it(`${what}: an HttpParseError`, () => {
      for (const split of ['whole', 'bytes'] as const)
        expect(() => parse(kind, bytes, split), split).to.throw(HttpParseError, problem);
    });
  }

  it('a body or head over the limit is an HttpParseError marked too large', () => {
    for (const bytes of [
      'HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n',
      `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${'400\r\n'}${'x'.repeat(1024)}\r\n1\r\n`,
      `HTTP/1.1 200 OK\r\nX: ${'y'.repeat(70 * 1024)}`,
    ]) {
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
