/**
 * Priorities (README, The queue: priorities and fairness): the control `priority` (0 to 9, higher
 * first; DefaultPriority when absent) orders the waiting entries: an entry of a higher priority is
 * delivered before every waiting entry of a lower one, and entries of one priority keep their
 * arrival order. The ready heap (and each group's heap, groups.ts) is keyed by a rank that puts
 * the priority above the FIFO sequence number, so ordering stays one number compare.
 */
import { BadInputError } from '../../protocol/errors.js';
import type { ValueMap } from '../../protocol/message.js';
import type { QueueEntry } from './entry.js';

const MAX_PRIORITY = 9;

/** Room for the sequence numbers below a priority step: 2^48 entries, and 10 steps still fit in 2^53. */
const SEQ_SPAN = 2 ** 48;

/** The heap key of an entry of priority `priority` and sequence number `seq`: lower is delivered first. */
export function rank(seq: number, priority: number): number {
  return (MAX_PRIORITY - priority) * SEQ_SPAN + seq;
}

/** The heap key of an entry (entries stored before priorities have none: 0). */
export function rankOf(e: QueueEntry): number {
  return rank(e.seq, e.priority ?? 0);
}

/**
 * The priority in a stored document, read without parsing it (a start keeps documents unparsed:
 * entry-table.ts). Only the entry's own field can match: Data and Control values are lists (`:[`),
 * and a quote inside a string is escaped.
 */
export function storedPriority(doc: string): number {
  const i = doc.indexOf('"priority":');
  if (i < 0) return 0;
  const d = doc.charCodeAt(i + 11) - 48;
  return d >= 0 && d <= MAX_PRIORITY ? d : 0;
}

/** The `priority` control, else `fallback` (DefaultPriority); 400 naming the control for anything but 0 to 9. */
export function priorityOf(controls: ValueMap, fallback: number): number {
  if (!Object.hasOwn(controls, 'priority')) return fallback;
  const text = controls.priority?.[0] ?? '';
  if (!/^\s*\d\s*$/.test(text))
    throw new BadInputError(
      `control priority must be a whole number from 0 to ${MAX_PRIORITY} (higher is delivered first), got '${text}'`,
    );
  return Number(text.trim());
}
