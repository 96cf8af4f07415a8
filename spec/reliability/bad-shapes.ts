/**
 * Malformed protocol payloads for the bad-input battery: hand-picked wrong shapes (every field of a
 * Message wrong in turn, prototype keys at every level) plus seeded random JSON, each paired with
 * whether it must be refused. The same payloads go over the hive (NATS) and over HTTP (the body).
 */
import { prng } from '../prng.js';

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

/** One payload and whether a receiver must refuse it (400) rather than possibly accept it. */
export interface BadPayload {
  text: string;
  mustRefuse: boolean;
}

const message = (parts: Record<string, unknown>): string =>
  JSON.stringify({ Class: 'c', Operation: 'o', Control: {}, Data: {}, ...parts });
/** JSON text with a prototype key as an own property (JSON.stringify would drop `__proto__`). */
const withKey = (where: 'Data' | 'Control' | 'top', key: string): string =>
  where === 'top'
    ? `{"Class":"c","Operation":"o","Control":{},"Data":{},"${key}":["x"]}`
    : message({}).replace(`"${where}":{}`, `"${where}":{"${key}":["x"]}`);

/** Hive wire messages (full Message objects) that must be refused. */
export function wrongMessages(): BadPayload[] {
  const fixed = [
    'null',
    '[]',
    '"text"',
    '42',
    'true',
    '{',
    '{"Class":',
    '',
    message({ Class: 1 }),
    message({ Operation: 5 }),
    message({ Control: [] }),
    message({ Data: 'x' }),
    message({ Data: { x: 'not a list' } }),
    message({ Data: { x: [1] } }),
    message({ Data: { x: [null] } }),
    message({ Control: { c: [{}] } }),
    message({ Data: { x: [['nested']] } }),
    message({ Class: 'ech\u0000o' }),
    message({ Operation: 'x\r\ny' }),
    message({ Class: '\u001b[31m' }),
    message({ Operation: '\u0085' }),
  ];
  const proto = PROTO_KEYS.flatMap((k) => [withKey('Data', k), withKey('Control', k), withKey('top', k)]);
  return [...fixed, ...proto].map((text) => ({ text, mustRefuse: true }));
}

/** HTTP bodies (a Data map in strict mode) that must be refused. */
export function wrongBodies(): BadPayload[] {
  // a `null` body counts as no Data (like an empty body), so it is not among them
  const fixed = [
    '[]',
    '"text"',
    '42',
    '{',
    '{"x":"not a list"}',
    '{"x":[1]}',
    '{"x":[null]}',
    '{"x":[["nested"]]}',
    '{"x":{}}',
  ];
  const proto = PROTO_KEYS.map((k) => `{"${k}":["x"]}`);
  return [...fixed, ...proto].map((text) => ({ text, mustRefuse: true }));
}

/** `count` seeded random JSON texts, some valid Data maps, many not; none has to be refused. */
export function randomJson(seed: number, count: number): BadPayload[] {
  const rnd = prng(seed);
  const int = (n: number): number => Math.floor(rnd() * n);
  const keys = ['x', 'Data', 'Control', 'Class', ...PROTO_KEYS, 'a'.repeat(int(300)), '\u0000', 'é'];
  const value = (depth: number): unknown => {
    const r = int(depth > 2 ? 5 : 8);
    if (r === 0) return null;
    if (r === 1) return int(1e6) - 5e5;
    if (r === 2) return rnd() < 0.5;
    if (r === 3 || r === 4) return String.fromCharCode(...Array.from({ length: int(20) }, () => int(0x3000)));
    if (r === 5) return Array.from({ length: int(4) }, () => value(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = int(4); i > 0; i--) o[keys[int(keys.length)]!] = value(depth + 1);
    return o;
  };
  return Array.from({ length: count }, () => {
    let text = JSON.stringify(value(0)) ?? 'null';
    // now and then damage the text itself
    if (rnd() < 0.2) text = text.slice(0, int(text.length + 1));
    return { text, mustRefuse: false };
  });
}
