/**
 * The protocol message and result (README, Services; docs/ARCHITECTURE.md, Codes and errors) and the
 * validation of untrusted shapes. No map built here has Object.prototype on its chain (see
 * emptyMap), so a key such as "toString" is plain data; the keys "__proto__", "constructor" and
 * "prototype" are refused outright because other code (templates, JSON consumers in other languages)
 * may still treat them specially.
 */
import { BadInputError, TooLargeError, codeOf, describeError } from './errors.js';
import { Code, SUCCESS_MESSAGE } from './codes.js';

/** Every Data and Control value is a list of strings. */
export type Values = string[];
/** A name → list-of-strings map with no Object.prototype on its chain (emptyMap). */
export type ValueMap = Record<string, Values>;

/** A protocol message (README, Services). */
export interface Message {
  Class: string;
  Operation: string;
  Control: ValueMap;
  Data: ValueMap;
}

/** The response shape returned by services and by the gateway (README, Services). */
export interface Result {
  Code: number;
  Message: string;
  Data: ValueMap;
  List: unknown[] | null;
}

/** Bounds applied to untrusted shapes so one request cannot exhaust memory. */
export interface ShapeLimits {
  /** Keys in one Data or Control map. */
  maxKeys: number;
  /** Values in one list. */
  maxValues: number;
  /** Characters in one key. */
  maxKeyLength: number;
  /** Characters summed over every key and value of the message. */
  maxChars: number;
}

export const DEFAULT_LIMITS: ShapeLimits = Object.freeze({
  maxKeys: 10_000,
  maxValues: 1_000_000,
  maxKeyLength: 1_024,
  maxChars: 64 * 1024 * 1024,
});

const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** True for names that must never become map keys. */
export function isForbiddenKey(key: string): boolean {
  return FORBIDDEN_KEYS.has(key);
}

/**
 * The prototype of every value map: empty, frozen, itself with a null prototype. A map of
 * `Object.create(null)` starts in V8's dictionary mode — a hash table, every read and write a lookup
 * the inline caches cannot keep — while a map made from this shared prototype is a fast object: maps
 * of the same keys share a hidden class, so the gateway's, the hive's and every service's reads of
 * `Control.x` or `Data.y` are cached loads (docs/ARCHITECTURE.md, Conventions). The chain still holds
 * no Object.prototype, so "toString", "hasOwnProperty" or "__proto__" read from a map are its own
 * data or undefined, as with a null prototype; and the prototype is frozen, so no code can add
 * a key every map would then seem to hold.
 */
const MAP_PROTOTYPE: object = Object.freeze(Object.create(null) as object);

/** A new empty value map (see MAP_PROTOTYPE). */
export function emptyMap(): ValueMap {
  return Object.create(MAP_PROTOTYPE) as ValueMap;
}

/**
 * An empty record with a value map's prototype (see MAP_PROTOTYPE), for the maps other than value
 * maps whose keys come from outside: header and option maps, a flow's step results, a CEF header.
 */
export function emptyRecord<T>(): Record<string, T> {
  return Object.create(MAP_PROTOTYPE) as Record<string, T>;
}

/**
 * True when `proto` is one a JSON-shaped object may have: Object.prototype (a literal, JSON.parse),
 * null, or a value map's (emptyMap).
 */
export function isPlainPrototype(proto: unknown): boolean {
  return proto === Object.prototype || proto === MAP_PROTOTYPE || proto === null;
}

/** A copy of a value map (the same value arrays, a new map), key by key. */
export function copyMap(map: ValueMap): ValueMap {
  const copy = emptyMap();
  const keys = Object.keys(map);
  for (let i = 0; i < keys.length; i++) copy[keys[i]!] = map[keys[i]!]!;
  return copy;
}

function put(map: ValueMap, key: string, values: Values): void {
  if (isForbiddenKey(key)) throw new BadInputError(`key '${key}' is not allowed`);
  map[key] = values;
}

/** Builds a value map from trusted entries (keys are still checked: they may come from config). */
export function mapOf(entries: Iterable<readonly [string, Values]> | Record<string, Values>): ValueMap {
  const out = emptyMap();
  if (Symbol.iterator in entries) {
    for (const [k, v] of entries as Iterable<readonly [string, Values]>) put(out, k, v);
    return out;
  }
  // a record is read by its keys: no [key, value] pair is built per entry
  const record = entries as Record<string, Values>;
  for (const k of Object.keys(record)) put(out, k, record[k]!);
  return out;
}

/** A message from trusted parts, with empty maps where none are given. */
export function makeMessage(parts: Partial<Message> = {}): Message {
  return {
    Class: parts.Class ?? '',
    Operation: parts.Operation ?? '',
    Control: parts.Control ?? emptyMap(),
    Data: parts.Data ?? emptyMap(),
  };
}

/** The first value of a map entry, or undefined when the entry is missing or empty. */
export function firstValue(map: ValueMap, key: string): string | undefined {
  return Object.hasOwn(map, key) ? map[key]?.[0] : undefined;
}

/** A success Result (Code 200, Message 'Success'). */
export function success(data: ValueMap = emptyMap(), list: unknown[] | null = []): Result {
  return { Code: Code.Success, Message: SUCCESS_MESSAGE, Data: data, List: list };
}

/** A failure Result with the given Code and message. */
export function failure(code: number, message: string, data: ValueMap = emptyMap()): Result {
  return { Code: code, Message: message, Data: data, List: null };
}

/** The Result reporting a thrown value: its own Code for HiveErrors, 500 otherwise. */
export function resultFromError(error: unknown): Result {
  return failure(codeOf(error), describeError(error));
}

/** Budget shared by the checks of one message, so the limits hold for the whole shape. */
class Budget {
  private chars = 0;
  constructor(readonly limits: ShapeLimits) {}
  spend(n: number, where: string): void {
    this.chars += n;
    if (this.chars > this.limits.maxChars) {
      throw new TooLargeError(`${where}: message is larger than ${this.limits.maxChars} characters`);
    }
  }
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'list';
  return typeof v;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  return isPlainPrototype(Object.getPrototypeOf(v));
}

/** Validates one name → list-of-strings map from untrusted input; `where` names it in errors. */
export function validateValueMap(
  input: unknown,
  where: string,
  limits: ShapeLimits = DEFAULT_LIMITS,
  budget = new Budget(limits),
): ValueMap {
  if (input === undefined || input === null) return emptyMap();
  if (!isPlainObject(input))
    throw new BadInputError(`${where} must be an object of name -> list of strings, got ${typeName(input)}`);
  const keys = Object.keys(input);
  if (keys.length > limits.maxKeys)
    throw new TooLargeError(`${where} has ${keys.length} keys; the limit is ${limits.maxKeys}`);
  const out = emptyMap();
  for (const key of keys) {
    if (isForbiddenKey(key)) throw new BadInputError(`${where} key '${key}' is not allowed`);
    if (key.length > limits.maxKeyLength)
      throw new TooLargeError(`${where} has a key longer than ${limits.maxKeyLength} characters`);
    const value = input[key];
    if (!Array.isArray(value))
      throw new BadInputError(`${where}.${key} must be a list of strings, got ${typeName(value)}`);
    if (value.length > limits.maxValues)
      throw new TooLargeError(`${where}.${key} has ${value.length} values; the limit is ${limits.maxValues}`);
    budget.spend(key.length, where);
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item !== 'string')
        throw new BadInputError(`${where}.${key}[${i}] must be a string, got ${typeName(item)}`);
      budget.spend(item.length, where);
    }
    out[key] = value as string[];
  }
  return out;
}

function optionalString(input: Record<string, unknown>, field: string, where: string): string {
  const v = input[field];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new BadInputError(`${where}.${field} must be a string, got ${typeName(v)}`);
  return v;
}

// C0 controls, DEL and C1 controls: a Class or Operation holding one (a percent-decoded %00, %0D,
// %0A from a URL) would reach services, routes and log lines as an invisible or line-breaking name
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;
const CONTROL_CHARACTERS = new RegExp(CONTROL_CHARACTER.source, 'g');

const codePoint = (c: string): string => c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');

/** Refuses a Class or Operation with a control character (400); `what` names the part in the message. */
export function checkNamePart(value: string, what: string): string {
  const m = CONTROL_CHARACTER.exec(value);
  if (m) {
    // the answer shows the value with its control characters escaped, never the raw bytes
    const shown = value.slice(0, 80).replace(CONTROL_CHARACTERS, (c) => `\\u${codePoint(c)}`);
    throw new BadInputError(
      `${what} '${shown}' contains the control character U+${codePoint(m[0])}; Class and Operation take printable characters only`,
    );
  }
  return value;
}

/** Checks Class and Operation of a message crossing the hive boundary (see checkNamePart). */
export function checkMessageNames(message: Message, where: string): Message {
  checkNamePart(message.Class, `${where}.Class`);
  checkNamePart(message.Operation, `${where}.Operation`);
  return message;
}

/** Validates an untrusted protocol message; `where` (for example 'body') prefixes error messages. */
export function validateMessage(input: unknown, where = 'message', limits: ShapeLimits = DEFAULT_LIMITS): Message {
  if (!isPlainObject(input))
    throw new BadInputError(
      `${where} must be an object with Class, Operation, Control and Data, got ${typeName(input)}`,
    );
  for (const key of Object.keys(input)) {
    if (isForbiddenKey(key)) throw new BadInputError(`${where} key '${key}' is not allowed`);
  }
  const budget = new Budget(limits);
  return {
    Class: checkNamePart(optionalString(input, 'Class', where), `${where}.Class`),
    Operation: checkNamePart(optionalString(input, 'Operation', where), `${where}.Operation`),
    Control: validateValueMap(input.Control, `${where}.Control`, limits, budget),
    Data: validateValueMap(input.Data, `${where}.Data`, limits, budget),
  };
}

/** Validates an untrusted Result (hive wire, interceptor reply); `Status` is accepted for `Code`. */
export function validateResult(input: unknown, where = 'result', limits: ShapeLimits = DEFAULT_LIMITS): Result {
  if (!isPlainObject(input))
    throw new BadInputError(`${where} must be an object with Code, Message, Data and List, got ${typeName(input)}`);
  const rawCode = input.Code ?? input.Status;
  if (typeof rawCode !== 'number' || !Number.isInteger(rawCode) || rawCode < 100 || rawCode > 599) {
    throw new BadInputError(
      `${where}.Code must be an integer from 100 to 599, got ${JSON.stringify(rawCode) ?? 'nothing'}`,
    );
  }
  const list = input.List;
  if (list !== undefined && list !== null && !Array.isArray(list))
    throw new BadInputError(`${where}.List must be a list or null, got ${typeName(list)}`);
  return {
    Code: rawCode,
    Message: optionalString(input, 'Message', where),
    Data: validateValueMap(input.Data, `${where}.Data`, limits),
    List: (list as unknown[] | undefined) ?? null,
  };
}
