/**
 * What the queue reads of its circuit breakers from outside (README, The queue, Circuit breakers):
 * the `breaker` command — control `breaker` `open`, `close` or `status` (the default), control
 * `channel` naming the target channel (open and close: DefaultChannel when absent; status: every
 * breaker when absent) — and, once at start, the breaker parameters.
 */
import type { ConfigOf } from '../../config/params.js';
import type { QUEUE_PARAMS } from '../../config/queue.js';
import { BadInputError, ConfigError, describeError } from '../../protocol/errors.js';
import type { ValueMap } from '../../protocol/message.js';
import { BREAKER_FORM, parseBreaker } from './breaker-rules.js';
import type { BreakerOptions } from './breaker.js';
import { selector } from './control-ranges.js';

type QueueConfig = ConfigOf<typeof QUEUE_PARAMS>;

const BREAKER_ACTIONS = ['open', 'close', 'status'] as const;
type BreakerAction = (typeof BREAKER_ACTIONS)[number];

export interface BreakerCommand {
  type: 'breaker';
  action: BreakerAction;
  channel?: string;
}

/** The longest BreakerOpenFor: one timer waits it (Node fires a longer timeout at once). */
const MAX_OPEN_FOR_MS = 24 * 86_400_000;

/** The breaker options of a configuration, read once at start: an expression it cannot read stops the start naming it. */
export function breakerOptionsOf(
  config: Pick<QueueConfig, 'Breaker' | 'BreakerOpenFor' | 'BreakerProbes' | 'DisableAfter'>,
): Omit<BreakerOptions, 'changed'> {
  let rules;
  try {
    rules = parseBreaker(config.Breaker);
  } catch (e) {
    throw new ConfigError(`Breaker: ${describeError(e)}; expected ${BREAKER_FORM}`);
  }
  if (config.BreakerOpenFor < 1)
    throw new ConfigError('BreakerOpenFor is 0; an open breaker needs a time before it half-opens, such as 30s');
  if (config.BreakerOpenFor > MAX_OPEN_FOR_MS)
    throw new ConfigError(`BreakerOpenFor is ${config.BreakerOpenFor} ms; it may be at most 24d`);
  return { rules, openForMs: config.BreakerOpenFor, probes: config.BreakerProbes, disableAfterMs: config.DisableAfter };
}

export function parseBreakerCommand(c: ValueMap): BreakerCommand {
  const given = Object.hasOwn(c, 'breaker') ? (c.breaker?.[0] ?? '').trim().toLowerCase() : 'status';
  const action = (given === '' ? 'status' : given) as BreakerAction;
  if (!BREAKER_ACTIONS.includes(action))
    throw new BadInputError(`control breaker is '${given}'; use one of ${BREAKER_ACTIONS.join(', ')}`);
  const channel = selector(c, 'channel', 'the target channel of the breaker');
  return { type: 'breaker', action, ...(channel !== undefined ? { channel } : {}) };
}
