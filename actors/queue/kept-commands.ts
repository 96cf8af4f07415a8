/**
 * The controls of the dead-set commands (kept.ts) read from a message: `older_than` / `newer_than`
 * (durations, read as the configuration and `delay` read them), and what `replay` and `purge` act on:
 * one entry by `key`, or the entries of a `state` matching `groupby` + `list` and the ages.
 */
import { parseDuration } from '../../config/values.js';
import { BadInputError, describeError } from '../../protocol/errors.js';
import type { Message, ValueMap } from '../../protocol/message.js';
import { DeliveryMode, EntryState } from './entry.js';
import type { AgeFilter, KeptFilter } from './kept.js';
import { KEPT_STATES } from './kept.js';
import { ACCEPTED_DURATION } from '../../config/values.js';
import { selector } from './control-ranges.js';

/** A control's single value, or undefined when absent. */
function single(controls: ValueMap, name: string): string | undefined {
  return Object.hasOwn(controls, name) ? (controls[name]?.[0] ?? '') : undefined;
}

/** The oldest age `older_than` / `newer_than` take: 100 years, beyond any entry and within Date's range. */
const MAX_AGE_DAYS = 36_500;
const MAX_AGE_MS = MAX_AGE_DAYS * 86_400_000;

function age(controls: ValueMap, name: 'older_than' | 'newer_than', now: number): number | undefined {
  const text = single(controls, name);
  if (text === undefined) return undefined;
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (e) {
    throw new BadInputError(
      `control ${name} '${text}' is not a duration (${describeError(e)}); use ${ACCEPTED_DURATION}`,
    );
  }
  // an age beyond any date would make a time the store cannot compare (and Date cannot print)
  if (ms > MAX_AGE_MS)
    throw new BadInputError(`control ${name} '${text}' is too long; an age may be at most ${MAX_AGE_DAYS} days`);
  return now - ms;
}

/** `older_than` / `newer_than` as times: kept entries are aged by when they ended, live ones by when they were added. */
export function ageFilterOf(controls: ValueMap, now: number): AgeFilter {
  const before = age(controls, 'older_than', now);
  const since = age(controls, 'newer_than', now);
  return { ...(before !== undefined ? { before } : {}), ...(since !== undefined ? { since } : {}) };
}

/** What a replay or purge acts on. With `key` the filter's other conditions do not apply. */
interface KeptTarget {
  key?: string;
  filter: KeptFilter;
}

/** Edit-and-replay: Data fields replaced in the one replayed entry, and its channel and mode. */
export interface ReplayEdits {
  data: ValueMap;
  channel?: string;
  mode?: string;
}

export type KeptCommand =
  { type: 'replay'; target: KeptTarget; edits: ReplayEdits } | { type: 'purge'; target: KeptTarget };

/**
 * Reads a replay or purge. The state defaults to dead; replay takes dead only, purge dead or done.
 * Edits (Data, `channel`, `mode`) need a `key`: they are meant for one entry, not a whole group.
 */
export function parseKeptCommand(kind: KeptCommand['type'], message: Message, now: number): KeptCommand {
  const c = message.Control;
  const state = selector(c, 'state', 'dead or done') ?? EntryState.Dead;
  const allowed: readonly string[] = kind === 'replay' ? [EntryState.Dead] : KEPT_STATES;
  if (!allowed.includes(state)) throw new BadInputError(`${kind} takes state ${allowed.join(' or ')}, got '${state}'`);
  const groupBy = selector(c, 'groupby', 'the attribute to group by');
  const value = single(c, 'list');
  if (groupBy !== undefined && value === undefined)
    throw new BadInputError(
      `${kind} with groupby '${groupBy}' needs control list (the value whose entries to ${kind})`,
    );
  if (value !== undefined && groupBy === undefined)
    throw new BadInputError(`${kind} with control list needs control groupby (the attribute whose value list names)`);
  const key = selector(c, 'key', `the key of the entry to ${kind}`);
  const filter: KeptFilter = {
    state: state as KeptFilter['state'],
    ...(groupBy !== undefined ? { groupBy, value } : {}),
    ...ageFilterOf(c, now),
  };
  const target: KeptTarget = key !== undefined ? { key, filter } : { filter };
  if (kind === 'purge') return { type: 'purge', target };
  const edits: ReplayEdits = {
    data: message.Data,
    ...(single(c, 'channel') ? { channel: single(c, 'channel') } : {}),
    ...(single(c, 'mode') ? { mode: single(c, 'mode') } : {}),
  };
  if (edits.mode !== undefined && !Object.values(DeliveryMode).includes(edits.mode as DeliveryMode))
    throw new BadInputError(`control mode must be 'call' or 'execute', got '${edits.mode}'`);
  if (
    key === undefined &&
    (Object.keys(edits.data).length > 0 || edits.channel !== undefined || edits.mode !== undefined)
  ) {
    throw new BadInputError('replay edits (Data, channel, mode) apply to one entry: name it with control key');
  }
  return { type: 'replay', target, edits };
}
