import { createRequire } from 'node:module';
import { Http1Parser, HttpParseError } from '../../actors/wire/http1-parser.js';
import { prng } from '../prng.js';

/**
 * The lean wire's HTTP/1.x parser (actors/wire/http1-parser.ts) held against llhttp, the parser of
 * node:http: generated and mutated requests and responses go to both, and every message the lean
 * parser accepts must be one llhttp reads at the same place with the same method, target or status
 * and the same body bytes. The lean parser may refuse more than llhttp (it is the stricter one by
 * design); it may never frame a message llhttp frames differently or refuses: that gap is request
 * smuggling. llhttp runs in-process through the binding node:http itself uses (HTTPParser of
 * _http_common): synchronous, a few microseconds a case, where a node:http server and client on a
 * socket pair would cost a round trip of the event loop per case and hide refusals in socket errors.
 */

interface HTTPParserInstance {
  initialize(type: number, resource: object, maxHeaderSize?: number, lenient?: number): void;
  execute(data: Buffer): number | Error;
  finish(): Error | undefined;
  close(): void;
  [key: number]: unknown;
}
interface HTTPParserClass {
  new (): HTTPParserInstance;
  REQUEST: number;
  RESPONSE: number;
  kOnHeaders: number;
  kOnHeadersComplete: number;
  kOnBody: number;
  kOnMessageComplete: number;
}
const require = createRequire(import.meta.url);
const common = require('_http_common') as { HTTPParser: HTTPParserClass; methods: string[] };
const { HTTPParser, methods } = common;

export type Kind = 'request' | 'response';

/** What framing decides of a message: compared between the two parsers. */
export interface Framed {
  method: string;
  target: string;
  status: number;
  body: string;
}

export interface Outcome {
  messages: Framed[];
  /** The parser refused (an error, or bytes cut off at the end); `stopped`: it read no further by design. */
  refused: string | undefined;
}

const MAX_BODY = 1 << 20;

/** The lean parser over `data` cut into the pieces `cuts` gives, then the connection's end. */
export function runLean(kind: Kind, data: Buffer, cuts: number[]): Outcome {
  const messages: Framed[] = [];
  const parser = new Http1Parser(kind, MAX_BODY, {
    onMessage: (head, body) => {
      messages.push({ method: head.method, target: head.target, status: head.status, body: body.toString('latin1') });
      // as lean-server.ts and lean-client.ts do: nothing is read after a message that closes
      if (head.close) parser.stop();
    },
  });
  try {
    let from = 0;
    for (const cut of [...cuts, data.length]) {
      if (cut > from) parser.execute(data.subarray(from, cut));
      from = Math.max(from, cut);
    }
    return { messages, refused: parser.end() };
  } catch (e) {
    if (!(e instanceof HttpParseError)) throw e;
    return { messages, refused: e.message };
  }
}

/** llhttp (strict, as node:http runs it) over `data` in one piece, then the connection's end. */
export function runLlhttp(kind: Kind, data: Buffer): Outcome {
  // a new parser each time: one re-initialized after an error kept some of its state
  const p = new HTTPParser();
  p.initialize(kind === 'request' ? HTTPParser.REQUEST : HTTPParser.RESPONSE, {}, 64 * 1024, 0);
  const messages: Framed[] = [];
  let current: Framed | undefined;
  let url = '';
  let body: Buffer[] = [];
  let upgraded = false;
  // as node:http reads it: the target comes in parts when many headers are flushed before the end
  // of the head; a flush after it (trailers) repeats the target, which is not the next message's
  p[HTTPParser.kOnHeaders] = (_headers: string[], part: string) => {
    if (current === undefined) url += part;
  };
  p[HTTPParser.kOnHeadersComplete] = (
    _maj: number,
    _min: number,
    _headers: string[],
    method: number | undefined,
    target: string | undefined,
    status: number | undefined,
    _reason: string,
    upgrade: boolean,
  ) => {
    current = {
      method: method === undefined ? '' : methods[method]!,
      target: kind === 'request' ? target || url : '',
      status: status ?? 0,
      body: '',
    };
    url = '';
    body = [];
    if (upgrade) upgraded = true;
    return 0;
  };
  p[HTTPParser.kOnBody] = (b: Buffer) => {
    body.push(Buffer.from(b));
  };
  p[HTTPParser.kOnMessageComplete] = () => {
    current!.body = Buffer.concat(body).toString('latin1');
    messages.push(current!);
    current = undefined;
  };
  const n = p.execute(data);
  const result = outcome(n, data.length);
  p.close();
  return result;

  function outcome(n: number | Error, length: number): Outcome {
    if (n instanceof Error) return { messages, refused: (n as Error & { code?: string }).code ?? n.message };
    // an upgrade (or CONNECT) hands the rest of the connection to another protocol: no more messages
    if (upgraded) return { messages, refused: n < length ? 'upgrade' : undefined };
    const f = p.finish();
    if (f instanceof Error) return { messages, refused: (f as Error & { code?: string }).code ?? f.message };
    return { messages, refused: undefined };
  }
}

/**
 * Why the lean outcome is a defect, undefined when it is not: each message it accepted must be the
 * one llhttp read at the same place, and a stream it read to the end without refusing must be one
 * llhttp read to the end as well.
 */
export function disagreement(lean: Outcome, ref: Outcome): string | undefined {
  for (let i = 0; i < lean.messages.length; i++) {
    const l = lean.messages[i]!;
    const r = ref.messages[i];
    if (r === undefined)
      return `message ${i}: the lean parser accepted ${describe(l)}, llhttp read no such message (${ref.refused ?? 'end'})`;
    if (l.method !== r.method || l.target !== r.target || l.status !== r.status || l.body !== r.body)
      return `message ${i}: lean ${describe(l)}, llhttp ${describe(r)}`;
  }
  return undefined;
}

function describe(m: Framed): string {
  return JSON.stringify(
    m.status
      ? { status: m.status, body: m.body.slice(0, 60) }
      : { method: m.method, target: m.target, body: m.body.slice(0, 60) },
  );
}

// ---- the cases ----

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const chance = (r: Rand, p: number): boolean => r() < p;
/**
 * How hostile the case being made is: 0 for well-formed messages (of every framing, pipelined, cut
 * anywhere: what both parsers must read alike), up to 1 for the odd values of the tables below.
 */
let hostility = 1;
/** A sane choice with probability `p` at full hostility, always in a well-formed case. */
const sane = (r: Rand, p: number): boolean => r() < 1 - (1 - p) * hostility;

const EOLS = ['\r\n', '\r\n', '\r\n', '\r\n', '\r\n', '\r\n', '\n', '\r', '\r\r\n', '\n\r'];
const METHODS = [
  'GET',
  'POST',
  'PUT',
  'DELETE',
  'PATCH',
  'HEAD',
  'OPTIONS',
  'CONNECT',
  'get',
  'P0ST',
  'X-CUSTOM',
  'PRI',
  'GET ',
  '',
];
const TARGETS = ['/', '/call', '/a?b=c', '*', 'http://h/x', 'h:443', '/a b', '/a\tb', '', '/%00', '/\x7f', '/ü'];
const VERSIONS = [
  'HTTP/1.1',
  'HTTP/1.1',
  'HTTP/1.1',
  'HTTP/1.0',
  'HTTP/1.2',
  'HTTP/2.0',
  'HTTP/0.9',
  'http/1.1',
  'HTTP/1.1 ',
  'HTTP/11',
  'HTTP/1.',
];
const STATUSES = [
  '200 OK',
  '200 OK',
  '201 Created',
  '204 No Content',
  '304 Not Modified',
  '100 Continue',
  '103 Early Hints',
  '102 Processing',
  '110 X',
  '199 X',
  '101 Switching Protocols',
  '404 Not Found',
  '200',
  '200 ',
  '099 X',
  '1000 X',
  '20 X',
  '600 X',
  '200\tOK',
  '500 Internal Server Error',
];
const LENGTHS = [
  '\t5\t',
  '0',
  '1',
  '5',
  '13',
  '05',
  '+5',
  '-1',
  '5, 5',
  '5,5',
  '5, 6',
  ' 5 ',
  '0x5',
  '',
  '5 5',
  '99999999999999999999',
  '18446744073709551616',
  '1e3',
  '5\t',
  '٥',
];
const CODINGS = [
  'chunked',
  'chunked',
  'Chunked',
  'CHUNKED',
  'gzip, chunked',
  'chunked, gzip',
  'chunked ',
  ' chunked',
  'xchunked',
  'chunkedx',
  'identity',
  'gzip',
  'chunked, chunked',
  'chunked,',
  ',chunked',
  '"chunked"',
  'chunked;q=1',
  'chunked\t',
  '\tchunked',
  'gzip,\tchunked',
  'gzip ,chunked',
  '',
];
const SIZES = [
  '0',
  '1',
  '3',
  '5',
  'a',
  'A',
  '05',
  '00000000000000003',
  'ffffffffffffffff',
  '10000000000000000',
  '-1',
  '0x3',
  ' 3',
  '3 ',
  '3\t',
  '+3',
  'g',
  '',
  '7fffffff',
];
const EXTENSIONS = ['', '', '', ';a=b', ';a', ';a="b;c"', ' ;a=b', ';', ';a=\x01', ';\r', ';a=b;c=d', '; a = b'];
const NAMES = [
  'X-A',
  'Content-Type',
  'Connection',
  'Keep-Alive',
  'Expect',
  'Upgrade',
  'Host',
  'Content-Length ',
  ' Content-Length',
  'Content-Length\t',
  'Transfer-Encoding ',
  'Trailer',
  'X:Y',
  '',
  'X A',
  'Transfer_Encoding',
  'Content-Lengths',
];
const VALUES = [
  'v',
  'close',
  'keep-alive',
  'timeout=5',
  '100-continue',
  'websocket',
  'h2c',
  'upgrade',
  '',
  ' a ',
  'a\x00b',
  'a\x7fb',
  'ü',
  'a\rb',
  'a\tb',
];
const BYTES = [
  '\r',
  '\n',
  '\0',
  ' ',
  '\t',
  ':',
  ',',
  ';',
  '0',
  '1',
  'a',
  'f',
  'x',
  '\x7f',
  '\xff',
  '"',
  '\\',
  '/',
  'H',
];

function bodyBytes(r: Rand, n: number): string {
  let s = '';
  const alphabet = chance(r, 0.2) ? 'GET / HTTP/1.1\r\nHost: x\r\n\r\n0\r\n' : 'abcdefgh';
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(r() * alphabet.length)];
  return s;
}

function chunkedBody(r: Rand, eol: () => string): string {
  let s = '';
  const count = Math.floor(r() * 4);
  for (let i = 0; i < count; i++) {
    const n = 1 + Math.floor(r() * 8);
    const size = sane(r, 0.9) ? n.toString(16) : pick(r, SIZES);
    s +=
      size +
      (sane(r, 0.7) ? '' : pick(r, EXTENSIONS)) +
      eol() +
      bodyBytes(r, sane(r, 0.9) ? n : Math.floor(r() * 10)) +
      eol();
  }
  if (sane(r, 0.95)) {
    s +=
      (sane(r, 0.9) ? '0' : pick(r, ['00', '0 ', ' 0', '000000000000000000'])) +
      (sane(r, 0.5) ? '' : pick(r, EXTENSIONS)) +
      eol();
    if (chance(r, 0.3)) s += chance(r, hostility) ? `${pick(r, NAMES)}: ${pick(r, VALUES)}${eol()}` : `X-T: v${eol()}`;
    if (chance(r, 0.05))
      s += `${pick(r, ['Connection: close', 'Content-Length: 5', 'Transfer-Encoding: chunked', 'Host: x'])}${eol()}`;
    s += eol();
  }
  return s;
}

function message(r: Rand, kind: Kind): string {
  const sloppy = chance(r, 0.1 * hostility);
  const eol = (): string => (sloppy ? pick(r, EOLS) : '\r\n');
  let s =
    kind === 'request'
      ? `${sane(r, 0.8) ? pick(r, ['GET', 'POST']) : pick(r, METHODS)} ${sane(r, 0.8) ? '/call' : pick(r, TARGETS)} ${sane(r, 0.8) ? 'HTTP/1.1' : pick(r, VERSIONS)}`
      : `${sane(r, 0.85) ? 'HTTP/1.1' : pick(r, VERSIONS)} ${sane(r, 0.6) ? '200 OK' : pick(r, STATUSES)}`;
  s += eol();
  const headers: string[] = [];
  if (kind === 'request' && sane(r, 0.95)) headers.push(`Host: ${sane(r, 0.9) ? 'h' : pick(r, VALUES)}`);
  if (kind === 'request' && chance(r, 0.03 * hostility)) headers.push('Host: h2');
  // framing: none, a length, chunked, or both; each possibly doubled
  const framing = r();
  let body = '';
  if (framing < 0.3) {
    const n = Math.floor(r() * 12);
    headers.push(
      `${pick(r, ['Content-Length', 'content-length', 'CONTENT-LENGTH'])}:${pick(r, [' ', '', '  ', '\t'])}${sane(r, 0.75) ? String(n) : pick(r, LENGTHS)}`,
    );
    if (chance(r, 0.1 * hostility)) headers.push(`Content-Length: ${chance(r, 0.5) ? String(n) : pick(r, LENGTHS)}`);
    body = bodyBytes(r, sane(r, 0.85) ? n : Math.floor(r() * 14));
  } else if (framing < 0.6) {
    headers.push(
      `${pick(r, ['Transfer-Encoding', 'transfer-encoding'])}: ${sane(r, 0.7) ? 'chunked' : pick(r, CODINGS)}`,
    );
    if (chance(r, 0.1 * hostility)) headers.push(`Transfer-Encoding: ${pick(r, CODINGS)}`);
    if (chance(r, 0.1 * hostility)) headers.push(`Content-Length: ${pick(r, LENGTHS)}`);
    body = chunkedBody(r, eol);
  } else if (framing < 0.6 + 0.1 * hostility) {
    headers.push(`Content-Length: ${pick(r, LENGTHS)}`, `Transfer-Encoding: ${pick(r, CODINGS)}`);
    body = chance(r, 0.5) ? chunkedBody(r, eol) : bodyBytes(r, Math.floor(r() * 8));
  } else if (kind === 'response' || chance(r, 0.3)) {
    body = bodyBytes(r, Math.floor(r() * 8));
  }
  const extra = chance(r, 0.3) ? Math.floor(r() * 3) : 0;
  for (let i = 0; i < extra; i++)
    headers.push(
      chance(r, hostility)
        ? `${pick(r, NAMES)}:${pick(r, [' ', '', '  '])}${pick(r, VALUES)}`
        : `X-${i}: ${pick(r, ['v', 'a b', 'ü', '"q"', 'a\tb'])}`,
    );
  if (chance(r, 0.1))
    headers.push(
      `Connection: ${pick(r, ['close', 'keep-alive', 'Close', 'upgrade', 'close, keep-alive', 'Upgrade, close'])}`,
    );
  if (chance(r, 0.03)) headers.push(`Upgrade: ${pick(r, ['websocket', 'h2c', ''])}`);
  if (chance(r, 0.05)) headers.push('Expect: 100-continue');
  shuffle(r, headers);
  for (const h of headers) {
    s += h + eol();
    // obs-fold: a continuation line after a header
    if (chance(r, 0.02 * hostility)) s += `${pick(r, [' ', '\t'])}${pick(r, ['chunked', '5', 'x', ''])}${eol()}`;
  }
  s += eol();
  return s + body;
}

function shuffle<T>(r: Rand, xs: T[]): void {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
}

/** A few byte edits: the shapes no generator rule foresaw. */
function mutate(r: Rand, s: string): string {
  const edits = 1 + Math.floor(r() * 3);
  for (let i = 0; i < edits && s.length > 0; i++) {
    const at = Math.floor(r() * s.length);
    switch (Math.floor(r() * 4)) {
      case 0:
        s = s.slice(0, at) + pick(r, BYTES) + s.slice(at + 1);
        break;
      case 1:
        s = s.slice(0, at) + pick(r, BYTES) + s.slice(at);
        break;
      case 2:
        s = s.slice(0, at) + s.slice(at + 1);
        break;
      default: {
        const len = 1 + Math.floor(r() * 8);
        s = s.slice(0, at) + s.slice(at, at + len) + s.slice(at);
      }
    }
  }
  return s;
}

/** The bytes as a JavaScript string literal, every byte outside printable ASCII escaped. */
export function escape(data: Buffer): string {
  let s = "'";
  for (const b of data) {
    const c = String.fromCharCode(b);
    if (c === '\r') s += '\\r';
    else if (c === '\n') s += '\\n';
    else if (c === '\t') s += '\\t';
    else if (c === "'" || c === '\\') s += `\\${c}`;
    else if (b < 0x20 || b >= 0x7f) s += `\\x${b.toString(16).padStart(2, '0')}`;
    else s += c;
  }
  return `${s}'`;
}

export interface Case {
  kind: Kind;
  data: Buffer;
  /** Where the bytes are cut into reads for the second lean run. */
  cuts: number[];
}

/** Case `index` of the run seeded `seed`: the same pair always gives the same bytes. */
export function makeCase(seed: number, index: number): Case {
  const r = prng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const kind: Kind = chance(r, 0.5) ? 'request' : 'response';
  hostility = chance(r, 0.4) ? 0 : chance(r, 0.5) ? 0.3 : 1;
  // pipelining: one to three messages in a row
  const count = chance(r, 0.6) ? 1 : 2 + Math.floor(r() * 2);
  let s = '';
  for (let i = 0; i < count; i++) s += message(r, kind);
  if (chance(r, 0.4 * hostility)) s = mutate(r, s);
  // a truncated tail now and then: what a connection cut in the middle leaves
  if (chance(r, 0.05)) s = s.slice(0, Math.floor(r() * s.length));
  const data = Buffer.from(s, 'latin1');
  let cuts: number[];
  if (chance(r, 0.3) || data.length < 64) {
    // split at every byte
    cuts = Array.from({ length: data.length }, (_, i) => i);
  } else {
    cuts = [];
    for (let i = 0; i < 4; i++) cuts.push(Math.floor(r() * data.length));
    cuts.sort((a, b) => a - b);
  }
  return { kind, data, cuts };
}

export interface Finding {
  seed: number;
  index: number;
  kind: Kind;
  /** The bytes as a string literal (latin1), ready to paste into a unit test. */
  bytes: string;
  problem: string;
}

export interface Summary {
  cases: number;
  /** Cases where the lean parser accepted at least one message (each checked against llhttp's). */
  accepted: number;
  /** Cases the lean parser refused somewhere. */
  leanRefused: number;
  /** Cases where the lean parser accepted a message llhttp framed otherwise or refused. */
  disagreements: number;
  findings: Finding[];
}

/** Cases `from` to `from + count` of the run seeded `seed`. */
export function fuzz(seed: number, count: number, from = 0, maxFindings = 20): Summary {
  const summary: Summary = { cases: 0, accepted: 0, leanRefused: 0, disagreements: 0, findings: [] };
  for (let index = from; index < from + count; index++) {
    const c = makeCase(seed, index);
    const ref = runLlhttp(c.kind, c.data);
    const whole = runLean(c.kind, c.data, []);
    const split = runLean(c.kind, c.data, c.cuts);
    summary.cases++;
    if (whole.refused !== undefined) summary.leanRefused++;
    if (whole.messages.length > 0) summary.accepted++;
    const problem =
      disagreement(whole, ref) ??
      (disagreement(split, ref) === undefined
        ? undefined
        : `read in pieces at ${c.cuts.length} cuts: ${disagreement(split, ref)}`);
    if (problem !== undefined) summary.disagreements++;
    if (problem !== undefined && summary.findings.length < maxFindings)
      summary.findings.push({ seed, index, kind: c.kind, bytes: escape(c.data), problem });
  }
  return summary;
}
