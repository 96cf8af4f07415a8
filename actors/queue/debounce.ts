/**
 * Debounce and replace (README, The queue: debounce and replace): with the control `debounce` (a
 * duration) and an `idempotency-key`, an entry becomes due only that long after it was added, and
 * another add with the same key while it waits replaces its Data and moves its due time to now +
 * debounce, so a burst is delivered once, with the last Data. The control `dedup_mode` says what a
 * second add with a key does: `drop` (the DedupWindow's deduplication, dedup.ts: the default without
 * debounce), `replace` (the default with it) or `keep-last-if-active` (replace, and at most one entry
 * of the key delivered at a time: a later one waits until it ends).
 *
 * Replacing needs only the entries that have not been tried yet, so the keys of those are held here
 * (`open`), apart from the DedupWindow's keys: an entry leaves `open` when its first attempt starts,
 * and a later add of its key makes a new entry. A restart rebuilds `open` from the stored entries
 * that carry a key (their documents are parsed only for that: queue-core.ts, place).
 */
import { ACCEPTED_DURATION, parseDuration } from '../../config/values.js';
import { BadInputError } from '../../protocol/errors.js';
import { idempotencyKeyOf } from '../../protocol/idempotency.js';
import type { ValueMap } from '../../protocol/message.js';
import type { QueueEntry } from './entry.js';
import { EntryState } from './entry.js';

const DedupMode = { Drop: 'drop', Replace: 'replace', KeepLastIfActive: 'keep-last-if-active' } as const;
type DedupMode = (typeof DedupMode)[keyof typeof DedupMode];
/** The modes in which a later add replaces an entry instead of being dropped. */
export type ReplaceMode = Exclude<DedupMode, 'drop'>;

const MODES: readonly string[] = Object.values(DedupMode);

/** What an add's `debounce` / `dedup_mode` controls ask for; undefined when neither is given. */
export type KeyedAdd =
  /** The DedupWindow's deduplication (dedup.ts), the entry due `debounceMs` after it is added (if given). */
  { mode: 'drop'; debounceMs: number | undefined } | { mode: ReplaceMode; key: string; debounceMs: number | undefined };

/**
 * Reads the controls `debounce` and `dedup_mode`; 400 naming the control for a value it cannot read,
 * a debounce beyond `maxDebounceMs` (`limit` says why), a debounce beside `delay` / `not_before`, or
 * either without an `idempotency-key`.
 */
export function keyedAddOf(controls: ValueMap, maxDebounceMs: number, limit: string): KeyedAdd | undefined {
  const hasDebounce = Object.hasOwn(controls, 'debounce');
  const hasMode = Object.hasOwn(controls, 'dedup_mode');
  if (!hasDebounce && !hasMode) return undefined;
  let debounceMs: number | undefined;
  if (hasDebounce) {
    const text = controls.debounce?.[0] ?? '';
    try {
      debounceMs = parseDuration(text);
    } catch {
      throw new BadInputError(`control debounce '${text}' is not a duration; use ${ACCEPTED_DURATION}`);
    }
    if (debounceMs > maxDebounceMs)
      throw new BadInputError(`control debounce '${text}' is too long; it may be ${limit}`);
    if (Object.hasOwn(controls, 'delay') || Object.hasOwn(controls, 'not_before'))
      throw new BadInputError('control debounce sets the due time itself; leave out delay and not_before');
  }
  const modeText = hasMode ? (controls.dedup_mode?.[0] ?? '').trim().toLowerCase() : undefined;
  if (modeText !== undefined && !MODES.includes(modeText))
    throw new BadInputError(
      `control dedup_mode '${controls.dedup_mode?.[0] ?? ''}' is not known; use one of ${MODES.join(', ')}`,
    );
  const key = idempotencyKeyOf(controls);
  if (key === undefined)
    throw new BadInputError(
      `control ${hasDebounce ? 'debounce' : 'dedup_mode'} needs control idempotency-key: the key whose entries it ${hasDebounce ? 'debounces' : 'deduplicates'}`,
    );
  const mode = (modeText ?? (hasDebounce ? DedupMode.Replace : DedupMode.Drop)) as DedupMode;
  return mode === DedupMode.Drop ? { mode, debounceMs } : { mode, key, debounceMs };
}

/** Whether a later add of the entry's key replaces it: it waits and was never tried. */
function replaceable(e: QueueEntry | undefined): e is QueueEntry {
  return (
    e !== undefined &&
    e.attempts === 0 &&
    (e.state === EntryState.Pending || e.state === EntryState.Scheduled || e.state === EntryState.Waiting)
  );
}

/** The replace-mode keys of the entries still waiting, and (keep-last-if-active) of those being delivered. */
export class LiveKeys {
  /** Idempotency key → the entry a later add replaces. */
  private readonly open = new Map<string, string>();
  /** keep-last-if-active: idempotency key → the entry of that key being delivered, and back. */
  private readonly active = new Map<string, string>();
  private readonly activeByEntry = new Map<string, string>();
  /** keep-last-if-active: idempotency key → the entry set aside while one of its key is delivered. */
  private readonly held = new Map<string, string>();

  /** Keys of entries that can still be replaced (status). */
  get size(): number {
    return this.open.size;
  }

  /** The waiting entry a replace-mode add of `key` replaces, if any. */
  target(key: string, entry: (entryKey: string) => QueueEntry | undefined): QueueEntry | undefined {
    const entryKey = this.open.get(key);
    if (entryKey === undefined) return undefined;
    const e = entry(entryKey);
    if (replaceable(e)) return e;
    this.open.delete(key);
    return undefined;
  }

  /** A new entry of a replace mode (added, or loaded waiting): later adds of its key replace it. */
  opened(e: QueueEntry): void {
    if (e.dedupKey !== undefined && replaceable(e)) this.open.set(e.dedupKey, e.key);
  }

  /**
   * keep-last-if-active: whether `e` must wait because another entry of its key is being delivered;
   * it is then held until that delivery ends (ended()).
   */
  holds(e: QueueEntry): boolean {
    if (e.dedupMode !== DedupMode.KeepLastIfActive || e.dedupKey === undefined) return false;
    const running = this.active.get(e.dedupKey);
    if (running === undefined || running === e.key) return false;
    this.held.set(e.dedupKey, e.key);
    return true;
  }

  /** An entry's attempt starts: a later add of its key makes a new entry; keep-last-if-active counts it as running. */
  started(e: QueueEntry): void {
    if (e.dedupKey === undefined) return;
    if (this.open.get(e.dedupKey) === e.key) this.open.delete(e.dedupKey);
    if (e.dedupMode === DedupMode.KeepLastIfActive) {
      this.active.set(e.dedupKey, e.key);
      this.activeByEntry.set(e.key, e.dedupKey);
    }
  }

  /** An entry's attempt ended (outcome, or deleted while out): the entry held behind it, to be made ready again. */
  ended(entryKey: string): string | undefined {
    const key = this.activeByEntry.get(entryKey);
    if (key === undefined) return undefined;
    this.activeByEntry.delete(entryKey);
    if (this.active.get(key) === entryKey) this.active.delete(key);
    const next = this.held.get(key);
    this.held.delete(key);
    return next;
  }

  clear(): void {
    this.open.clear();
    this.active.clear();
    this.activeByEntry.clear();
    this.held.clear();
  }
}

/**
 * Replaces a waiting entry's message by a later add's (its Data, Class, Operation and passed
 * controls) and, with a debounce, moves its due time to now + debounce. Returns whether the due
 * time moved (the retry scheduler then needs the new one).
 */
export function replaceEntry(
  e: QueueEntry,
  message: QueueEntry['message'],
  debounceMs: number | undefined,
  now: number,
): boolean {
  e.message = message;
  if (debounceMs === undefined) return false;
  e.dueAt = now + debounceMs;
  return true;
}
