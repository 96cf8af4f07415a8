/**
 * The replace-mode part of an add (debounce.ts): the messages of an add whose `dedup_mode` is
 * `replace` or `keep-last-if-active` each replace the waiting entry of their idempotency key (an
 * earlier one of the same add, or one in the queue), or make a new entry when none waits. The other
 * messages of the add go through the DedupWindow's plan as before (dedup.ts). Runs inside the queue
 * actor (queue-core.ts, add).
 */
import type { Message } from '../../protocol/message.js';
import type { KeyedAdd, LiveKeys, ReplaceMode } from './debounce.js';
import { keyedAddOf, replaceEntry } from './debounce.js';
import type { QueueEntry } from './entry.js';
import { EntryState } from './entry.js';
import { passedControls } from './command-parser.js';

/** A replace-mode message of an add: where it is in the add, and what it asks. */
interface KeyedMessage {
  at: number;
  message: Message;
  ask: Extract<KeyedAdd, { key: string }>;
}

/** An add split into the messages deduplicated as before (`rest`, at `restAt` in the add) and the replace-mode ones. */
export interface KeyedSplit {
  rest: Message[];
  restAt: number[];
  keyed: KeyedMessage[];
}

/**
 * Reads every message's `debounce` / `dedup_mode` (a bad one throws the 400 before anything
 * changes); undefined when no message of the add is in a replace mode (the usual add).
 */
export function splitKeyed(messages: readonly Message[], maxDebounceMs: number, limit: string): KeyedSplit | undefined {
  let split: KeyedSplit | undefined;
  for (let i = 0; i < messages.length; i++) {
    const ask = keyedAddOf(messages[i]!.Control, maxDebounceMs, limit);
    if (ask?.mode !== 'replace' && ask?.mode !== 'keep-last-if-active') continue;
    split ??= { rest: [], restAt: [], keyed: [] };
    split.keyed.push({ at: i, message: messages[i]!, ask: ask as KeyedMessage['ask'] });
  }
  if (!split) return undefined;
  let k = 0;
  for (let i = 0; i < messages.length; i++) {
    if (split.keyed[k]?.at === i) {
      k++;
      continue;
    }
    split.rest.push(messages[i]!);
    split.restAt.push(i);
  }
  return split;
}

/** How many new entries the replace-mode messages make: the capacity is checked before anything changes. */
export function newKeyedEntries(
  split: KeyedSplit,
  live: LiveKeys,
  entry: (key: string) => QueueEntry | undefined,
): number {
  const keys = new Set<string>();
  let n = 0;
  for (const { ask } of split.keyed) {
    if (keys.has(ask.key)) continue;
    keys.add(ask.key);
    if (!live.target(ask.key, entry)) n++;
  }
  return n;
}

export interface KeyedOutcome {
  /** New entries (pending, in the add's write). */
  created: QueueEntry[];
  /** Entries that were there before this add and got a later message. */
  replaced: QueueEntry[];
  /** The entry key of each replace-mode message, by its place in the add. */
  keysAt: Array<[number, string]>;
}

/**
 * Applies the replace-mode messages: each replaces the entry of its key or makes one (`make`); a
 * replaced entry that waits gets its new due time here (`reschedule`, with the due time it had), a
 * pending one when its write is committed.
 */
export function applyKeyed(
  split: KeyedSplit,
  live: LiveKeys,
  now: number,
  hooks: {
    entry: (key: string) => QueueEntry | undefined;
    make: (message: Message, key: string, mode: ReplaceMode, debounceMs: number | undefined) => QueueEntry;
    reschedule: (e: QueueEntry, dueBefore: number) => void;
  },
): KeyedOutcome {
  const { entry, make, reschedule } = hooks;
  const out: KeyedOutcome = { created: [], replaced: [], keysAt: [] };
  const mine = new Map<string, QueueEntry>();
  for (const { at, message, ask } of split.keyed) {
    let e = mine.get(ask.key) ?? live.target(ask.key, entry);
    if (!e) {
      e = make(message, ask.key, ask.mode, ask.debounceMs);
      out.created.push(e);
      live.opened(e);
    } else {
      const dueBefore = e.dueAt;
      const moved = replaceEntry(
        e,
        {
          Class: message.Class,
          Operation: message.Operation,
          Control: passedControls(message.Control),
          Data: message.Data,
        },
        ask.debounceMs,
        now,
      );
      if (!out.created.includes(e) && !out.replaced.includes(e)) out.replaced.push(e);
      if (moved && e.state !== EntryState.Pending) reschedule(e, dueBefore);
    }
    mine.set(ask.key, e);
    out.keysAt.push([at, e.key]);
  }
  return out;
}
