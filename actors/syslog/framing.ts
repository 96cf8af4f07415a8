/**
 * RFC 6587 TCP stream decoding. The framing is detected per frame, as rsyslog does: a frame that
 * starts with a digit is octet-counted (`MSG-LEN SP SYSLOG-MSG`, §3.4.1); anything else is
 * non-transparent and ends at LF (§3.4.2) or NUL (which some senders use); a CR before the LF is
 * dropped. LF, CR and NUL between frames are skipped.
 *
 * A stream that cannot be trusted — a count with a sign, leading zero or non-digit, a count over
 * the frame cap, or a line growing past the cap — yields a FrameError, and the caller must close
 * the connection: resynchronising inside a byte stream would only guess. Memory stays bounded: a
 * partial frame is held in one buffer of at most the cap (plus a count of a few digits), never as
 * a growing list of chunks, so one-byte chunks cost no more than one large chunk.
 */
import { Code } from '../../protocol/codes.js';
import { HiveError } from '../../protocol/errors.js';
import { assertNever } from '../../protocol/never.js';

/** Default largest frame: 64 KiB, RFC 5425's recommended minimum a receiver should accept. */
export const DEFAULT_MAX_FRAME_BYTES = 64 * 1024;

/** Why a stream was refused. */
export const FrameErrorKind = {
  /** A count beginning with `-` or `+`. */
  negativeCount: 'negative-count',
  /** A count with a leading zero or a non-digit before its space. */
  badCount: 'bad-count',
  /** A count over the cap. */
  countTooLarge: 'count-too-large',
  /** A non-transparent frame longer than the cap. */
  frameTooLarge: 'frame-too-large',
} as const;
export type FrameErrorKindName = (typeof FrameErrorKind)[keyof typeof FrameErrorKind];

/** The stream is not valid RFC 6587: close the connection. `frames` holds those decoded before the fault. */
export class FrameError extends HiveError {
  override readonly name = 'FrameError';
  override readonly code = Code.BadRequest;
  constructor(
    readonly kind: FrameErrorKindName,
    message: string,
    readonly frames: readonly Buffer[] = [],
  ) {
    super(message);
  }
}

export interface FrameDecoderOptions {
  /** Largest frame in bytes (the message without its count or terminator). */
  maxFrameBytes?: number;
}

/** The result of feeding bytes: the complete frames, and an error after which the connection must close. */
export interface FeedResult {
  frames: Buffer[];
  error?: FrameError;
}

const Mode = { idle: 'idle', count: 'count', octets: 'octets', line: 'line' } as const;
type ModeName = (typeof Mode)[keyof typeof Mode];

const EMPTY = Buffer.alloc(0);
const LF = 0x0a;
const CR = 0x0d;
const NUL = 0x00;
const SP = 0x20;
const isDigit = (b: number): boolean => b >= 0x30 && b <= 0x39;

export class FrameDecoder {
  readonly maxFrameBytes: number;
  private mode: ModeName = Mode.idle;
  /** Count characters read so far (sign included). */
  private countText = '';
  /** The partial frame; only `filled` bytes are valid. */
  private partial: Buffer = EMPTY;
  private filled = 0;
  /** Octets still missing of an octet-counted frame. */
  private remaining = 0;
  private failure: FrameError | undefined;

  constructor(options: number | FrameDecoderOptions = {}) {
    const max = typeof options === 'number' ? options : (options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES);
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`maxFrameBytes must be a positive integer, not ${max}`);
    this.maxFrameBytes = max;
  }

  /** Bytes held for an incomplete frame: never more than maxFrameBytes (plus the digits of a count). */
  get bufferedBytes(): number {
    return this.partial.length + this.countText.length;
  }

  /** Adds bytes; returns the complete frames and, once the stream is refused, the error (then and on every later call). */
  feed(chunk: Buffer): FeedResult {
    const frames: Buffer[] = [];
    if (this.failure) return { frames, error: this.failure };
    let i = 0;
    while (i < chunk.length) {
      switch (this.mode) {
        case Mode.idle: {
          const b = chunk[i]!;
          if (b === LF || b === CR || b === NUL) i++;
          else if (isDigit(b) || b === 0x2d || b === 0x2b) this.mode = Mode.count;
          else this.startLine();
          break;
        }
        case Mode.count:
          i = this.readCount(chunk, i);
          break;
        case Mode.octets: {
          const take = Math.min(this.remaining, chunk.length - i);
          if (this.filled === 0 && take === this.remaining) {
            // the whole frame is in this chunk: hand out a view, no copy
            frames.push(chunk.subarray(i, i + take));
            this.reset();
          } else {
            // the frame spans chunks: one buffer of exactly its size (at most the cap)
            if (this.filled === 0) this.partial = Buffer.allocUnsafe(this.remaining);
            chunk.copy(this.partial, this.filled, i, i + take);
            this.filled += take;
            this.remaining -= take;
            if (this.remaining === 0) {
              frames.push(this.partial);
              this.reset();
            }
          }
          i += take;
          break;
        }
        case Mode.line:
          i = this.readLine(chunk, i, frames);
          break;
        default:
          return assertNever(this.mode, 'frame decoder mode');
      }
      // read through a method: TypeScript keeps `this.failure` narrowed to undefined across the calls above
      const failure = this.failed();
      if (failure)
        return { frames, error: frames.length > 0 ? new FrameError(failure.kind, failure.message, frames) : failure };
    }
    return { frames };
  }

  /** Like feed, but throws the FrameError (which carries the frames decoded before it). */
  push(chunk: Buffer): Buffer[] {
    const r = this.feed(chunk);
    if (r.error) throw r.error;
    return r.frames;
  }

  /** At the end of the stream: a last non-transparent frame without its LF is still a frame; a partial octet-counted frame is dropped. */
  end(): Buffer[] {
    const last =
      !this.failure && this.mode === Mode.line && this.filled > 0
        ? this.trimCr(this.partial.subarray(0, this.filled))
        : undefined;
    this.reset();
    return last && !this.failure ? [last] : [];
  }

  private failed(): FrameError | undefined {
    return this.failure;
  }

  private readCount(chunk: Buffer, start: number): number {
    const maxDigits = String(this.maxFrameBytes).length;
    let i = start;
    for (; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (b === SP) break;
      const signed = this.countText.startsWith('-') || this.countText.startsWith('+');
      if (!isDigit(b) && !(this.countText === '' && (b === 0x2d || b === 0x2b))) {
        // `-x…` is an ordinary line that happens to start with a dash
        if (signed && this.countText.length === 1) return this.countToLine(i);
        this.fail(FrameErrorKind.badCount, `octet count '${this.countText}' is followed by a non-digit`);
        return i;
      }
      this.countText += String.fromCharCode(b);
      if (this.countText.length > maxDigits + 1) {
        this.fail(
          FrameErrorKind.countTooLarge,
          `octet count '${this.countText}…' is over the limit of ${this.maxFrameBytes} bytes`,
        );
        return i;
      }
    }
    if (i === chunk.length) return i;
    const text = this.countText;
    if (text.startsWith('-') || text.startsWith('+')) {
      if (text.length === 1) return this.countToLine(i);
      this.fail(FrameErrorKind.negativeCount, `octet count '${text}' has a sign`);
    } else if (text.startsWith('0')) {
      this.fail(FrameErrorKind.badCount, `octet count '${text}' starts with 0`);
    } else if (Number(text) > this.maxFrameBytes) {
      this.fail(FrameErrorKind.countTooLarge, `octet count ${text} is over the limit of ${this.maxFrameBytes} bytes`);
    } else {
      this.mode = Mode.octets;
      this.remaining = Number(text);
      this.countText = '';
      this.filled = 0;
    }
    return i + 1;
  }

  /** A lone sign was the first byte of a line, not of a count: continue as a line from it. */
  private countToLine(i: number): number {
    const sign = Buffer.from(this.countText, 'latin1');
    this.countText = '';
    this.startLine();
    this.append(sign, 0, sign.length);
    return i;
  }

  private readLine(chunk: Buffer, start: number, frames: Buffer[]): number {
    let end = start;
    while (end < chunk.length && chunk[end] !== LF && chunk[end] !== NUL) end++;
    if (end === chunk.length) {
      this.append(chunk, start, end);
      return end;
    }
    if (this.filled === 0) {
      if (end - start > this.maxFrameBytes + 1) this.tooLong();
      else frames.push(this.trimCr(chunk.subarray(start, end)));
    } else {
      this.append(chunk, start, end);
      if (!this.failure) frames.push(this.trimCr(this.partial.subarray(0, this.filled)));
    }
    if (!this.failure) this.reset();
    return end + 1;
  }

  private startLine(): void {
    this.mode = Mode.line;
    this.filled = 0;
  }

  /** Appends to the partial line, growing its buffer by doubling up to the cap (+1 for a CR before the LF). */
  private append(src: Buffer, from: number, to: number): void {
    const n = to - from;
    if (n === 0) return;
    const limit = this.maxFrameBytes + 1;
    if (this.filled + n > limit) {
      this.tooLong();
      return;
    }
    if (this.filled + n > this.partial.length) {
      const grown = Buffer.allocUnsafe(Math.min(limit, Math.max(256, this.partial.length * 2, this.filled + n)));
      this.partial.copy(grown, 0, 0, this.filled);
      this.partial = grown;
    }
    src.copy(this.partial, this.filled, from, to);
    this.filled += n;
  }

  /** A frame without its CR; a frame one byte over the cap is only allowed when that byte was the CR. */
  private trimCr(frame: Buffer): Buffer {
    const body = frame.length > 0 && frame[frame.length - 1] === CR ? frame.subarray(0, frame.length - 1) : frame;
    if (body.length > this.maxFrameBytes) this.tooLong();
    return body;
  }

  private tooLong(): void {
    this.fail(
      FrameErrorKind.frameTooLarge,
      `frame is over the limit of ${this.maxFrameBytes} bytes without a line end`,
    );
  }

  private fail(kind: FrameErrorKindName, message: string): void {
    this.failure = new FrameError(kind, message);
    // release the partial frame at once: the connection is about to close
    this.partial = EMPTY;
    this.filled = 0;
    this.countText = '';
  }

  private reset(): void {
    this.mode = Mode.idle;
    this.filled = 0;
    this.remaining = 0;
    this.countText = '';
    // the emitted frame may be a view of this buffer: never write into it again
    this.partial = EMPTY;
  }
}
