/**
 * The `idempotency-key` control (README, The queue: deduplication): a key a sender gives so that a
 * repeat of the same work creates nothing new. The queue and the flow deduplicate by it; the SQL
 * poller and a flow's steps set it on what they send. One definition here, below every service.
 */
import { BadInputError } from './errors.js';
import type { ValueMap } from './message.js';

/** The control naming an enqueue's idempotency key. */
export const IDEMPOTENCY_KEY = 'idempotency-key';
/** Longest key accepted: room for a UUID plus a prefix, without letting keys bloat the store. */
export const MAX_KEY_LENGTH = 200;
/** Printable ASCII: keys come from HTTP headers, where anything else is mangled or refused on the way. */
const PRINTABLE = /^[\x20-\x7e]+$/;

/** Whether a queue accepts `key` as an idempotency key (what idempotencyKeyOf refuses otherwise). */
export function fitsIdempotencyKey(key: string): boolean {
  return key.length <= MAX_KEY_LENGTH && PRINTABLE.test(key);
}

/**
 * The idempotency key of an enqueue, or undefined without the control. Throws BadInputError (400)
 * naming the control for an empty, overlong, unprintable or repeated key.
 */
export function idempotencyKeyOf(controls: ValueMap): string | undefined {
  if (!Object.hasOwn(controls, IDEMPOTENCY_KEY)) return undefined;
  const values = controls[IDEMPOTENCY_KEY] ?? [];
  if (values.length !== 1) throw new BadInputError(`control ${IDEMPOTENCY_KEY} takes one value, got ${values.length}`);
  const key = values[0]!;
  if (key === '')
    throw new BadInputError(
      `control ${IDEMPOTENCY_KEY} is empty; give a key of 1 to ${MAX_KEY_LENGTH} printable characters`,
    );
  if (key.length > MAX_KEY_LENGTH)
    throw new BadInputError(
      `control ${IDEMPOTENCY_KEY} is ${key.length} characters long; it may be at most ${MAX_KEY_LENGTH}`,
    );
  if (!PRINTABLE.test(key))
    throw new BadInputError(`control ${IDEMPOTENCY_KEY} may hold printable ASCII characters only`);
  return key;
}
