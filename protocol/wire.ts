/**
 * The JSON form of messages and results on a wire (NATS payloads, HTTP bodies, record files).
 * Parsing always validates: a wire is an untrusted boundary.
 */
import { BadInputError, describeError } from './errors.js';
import type { Message, Result, ShapeLimits } from './message.js';
import { DEFAULT_LIMITS, validateMessage, validateResult } from './message.js';

/** Parses JSON text, reporting syntax errors as Code 400 with the parser's reason. */
export function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new BadInputError(`${where} is not valid JSON: ${describeError(e)}`);
  }
}

export function encodeMessage(message: Message): string {
  return JSON.stringify(message);
}

export function decodeMessage(text: string, where = 'message', limits: ShapeLimits = DEFAULT_LIMITS): Message {
  return validateMessage(parseJson(text, where), where, limits);
}

export function encodeResult(result: Result): string {
  return JSON.stringify(result);
}

export function decodeResult(text: string, where = 'result', limits: ShapeLimits = DEFAULT_LIMITS): Result {
  return validateResult(parseJson(text, where), where, limits);
}
