/**
 * Wall-clock time in an IANA zone, for cron schedules (cron.ts): the zone's UTC offset at an
 * instant, and the instants a local time stands for — one, two in a repeated hour (clocks set
 * back), none in a skipped one (clocks set forward). Built on Intl.DateTimeFormat, which carries
 * the zone database of the Node runtime, so no dependency is needed.
 *
 * Local times are "naive" epoch milliseconds: the local fields read as if they were UTC
 * (Date.UTC(year, month, day, ...)), so calendar arithmetic on them is plain Date arithmetic.
 * Everything here works in whole seconds, the finest unit a cron names.
 */
import { BadInputError } from '../../protocol/errors.js';

const DAY_MS = 86_400_000;

/** What a local time stands for in a zone. */
export type LocalInstants =
  /** An ordinary local time: one instant. */
  | { kind: 'one'; at: number }
  /** A local time of a repeated hour: its first and its second occurrence. */
  | { kind: 'two'; first: number; second: number }
  /** A local time the clocks skipped: `transition` is the instant they jumped (the first valid local time after the gap). */
  | { kind: 'gap'; transition: number };

export class TimeZone {
  private static readonly known = new Map<string, TimeZone>();

  private constructor(
    readonly name: string,
    private readonly format: Intl.DateTimeFormat | undefined,
  ) {}

  /** The zone of an IANA name (UTC by default); throws BadInputError naming the control `tz` for a name the runtime does not know. */
  static of(name: string): TimeZone {
    const cached = TimeZone.known.get(name);
    if (cached) return cached;
    let zone: TimeZone;
    if (name === 'UTC') zone = new TimeZone(name, undefined);
    else {
      let format: Intl.DateTimeFormat;
      try {
        format = new Intl.DateTimeFormat('en-US', {
          timeZone: name,
          hourCycle: 'h23',
          year: 'numeric',
          month: 'numeric',
          day: 'numeric',
          hour: 'numeric',
          minute: 'numeric',
          second: 'numeric',
        });
      } catch {
        throw new BadInputError(
          `control tz '${name}' is not a known time zone; use an IANA name such as UTC, Europe/Berlin or America/New_York`,
        );
      }
      zone = new TimeZone(name, format);
    }
    TimeZone.known.set(name, zone);
    return zone;
  }

  /** Local minus UTC, in ms, at an instant (whole seconds). */
  offsetAt(instant: number): number {
    if (!this.format) return 0;
    const at = Math.floor(instant / 1000) * 1000;
    const f: Record<string, number> = {};
    for (const part of this.format.formatToParts(at)) if (part.type !== 'literal') f[part.type] = Number(part.value);
    return Date.UTC(f.year!, f.month! - 1, f.day!, f.hour!, f.minute!, f.second!) - at;
  }

  /** The local (naive) time of an instant. */
  localOf(instant: number): number {
    return Math.floor(instant / 1000) * 1000 + this.offsetAt(instant);
  }

  /**
   * The instants of a local time. The offsets a day either side bound the ones that can apply (no
   * zone changes its offset twice within two days).
   */
  instantsOf(local: number): LocalInstants {
    if (!this.format) return { kind: 'one', at: local };
    const earlier = this.offsetAt(local - DAY_MS);
    const later = this.offsetAt(local + DAY_MS);
    const valid = [...new Set([local - earlier, local - later])]
      .filter((i) => this.localOf(i) === local)
      .sort((a, b) => a - b);
    if (valid.length === 2) return { kind: 'two', first: valid[0]!, second: valid[1]! };
    if (valid.length === 1) return { kind: 'one', at: valid[0]! };
    // in the gap: local time runs from before `local` to after it between these two instants
    let lo = local - Math.max(earlier, later);
    let hi = local - Math.min(earlier, later);
    while (hi - lo > 1000) {
      const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
      if (this.localOf(mid) > local) hi = mid;
      else lo = mid;
    }
    return { kind: 'gap', transition: hi };
  }
}
