/**
 * RELP frames (README, Syslog: reliable delivery): `TXNR SP COMMAND SP DATALEN [SP DATA] LF`, as
 * rsyslog's librelp writes and reads them. TXNR is 0 to 999,999,999 (0 only for the server's hints,
 * such as `serverclose`), COMMAND 1 to 32 letters, DATALEN at most 9 digits; the SP before DATA is
 * there only when DATALEN is not 0. Anything else is a broken stream: the decoder throws a
 * RelpFrameError and the connection must close (a byte stream cannot be resynchronised reliably).
 *
 * Memory stays bounded: the header is at most 53 bytes, the data at most maxDataBytes, held in one
 * buffer of exactly its size when it spans chunks (a view of the chunk, no copy, when it does not).
 */
import { Code } from '../../protocol/codes.js';
import { HiveError } from '../../protocol/errors.js';

/** The largest transaction number; the next after it is 1 again (librelp's relpEngineNextTXNR). */
export const MAX_TXNR = 999_999_999;
const MAX_DIGITS = 9;
const MAX_COMMAND = 32;
const SP = 0x20;
const LF = 0x0a;

export interface RelpFrame {
  txnr: number;
  command: string;
  data: Buffer;
}

/** The stream is not RELP: close the connection. */
export class RelpFrameError extends HiveError {
  override readonly name = 'RelpFrameError';
  override readonly code = Code.BadRequest;
}

/** The transaction number after `txnr`. */
export function nextTxnr(txnr: number): number {
  return txnr >= MAX_TXNR ? 1 : txnr + 1;
}

/** One frame's bytes. */
export function encodeRelpFrame(txnr: number, command: string, data: Buffer | string = ''): Buffer {
  const body = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const head = Buffer.from(body.length > 0 ? `${txnr} ${command} ${body.length} ` : `${txnr} ${command} 0`, 'latin1');
  return Buffer.concat([head, body, Buffer.from([LF])]);
}

const Part = { txnr: 0, command: 1, length: 2, data: 3, trailer: 4 } as const;
type PartNumber = (typeof Part)[keyof typeof Part];

const isDigit = (b: number): boolean => b >= 0x30 && b <= 0x39;
const isAlpha = (b: number): boolean => (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);

export class RelpDecoder {
  private part: PartNumber = Part.txnr;
  private digits = 0;
  private txnr = 0;
  private command = '';
  private length = 0;
  private data: Buffer | undefined;
  private filled = 0;

  constructor(readonly maxDataBytes: number) {}

  /** Adds bytes; returns the complete frames. Throws RelpFrameError on a stream that is not RELP. */
  push(chunk: Buffer): RelpFrame[] {
    const frames: RelpFrame[] = [];
    let i = 0;
    while (i < chunk.length) {
      const b = chunk[i]!;
      switch (this.part) {
        case Part.txnr:
          if (isDigit(b)) {
            if (++this.digits > MAX_DIGITS) throw new RelpFrameError('RELP transaction number has more than 9 digits');
            this.txnr = this.txnr * 10 + (b - 0x30);
          } else if (b === SP && this.digits > 0) {
            this.part = Part.command;
          } else {
            throw new RelpFrameError(`RELP frame does not start with a transaction number (byte 0x${b.toString(16)})`);
          }
          i++;
          break;
        case Part.command:
          if (isAlpha(b)) {
            if (this.command.length === MAX_COMMAND) throw new RelpFrameError('RELP command is longer than 32 letters');
            this.command += String.fromCharCode(b);
          } else if (b === SP && this.command.length > 0) {
            this.part = Part.length;
            this.digits = 0;
          } else {
            throw new RelpFrameError(`RELP command '${this.command}' is followed by byte 0x${b.toString(16)}`);
          }
          i++;
          break;
        case Part.length:
          if (isDigit(b)) {
            if (++this.digits > MAX_DIGITS) throw new RelpFrameError('RELP data length has more than 9 digits');
            this.length = this.length * 10 + (b - 0x30);
            if (this.length > this.maxDataBytes)
              throw new RelpFrameError(
                `RELP data length is over the limit of ${this.maxDataBytes} bytes (MaxMessageBytes)`,
              );
            i++;
          } else if (this.digits === 0) {
            throw new RelpFrameError('RELP frame has no data length');
          } else if (this.length === 0) {
            // no data: the trailer follows at once (librelp also takes an SP there)
            this.part = Part.trailer;
            if (b === SP) i++;
          } else if (b === SP) {
            this.part = Part.data;
            this.filled = 0;
            i++;
          } else {
            throw new RelpFrameError(`RELP data length is followed by byte 0x${b.toString(16)}`);
          }
          break;
        case Part.data: {
          const take = Math.min(this.length - this.filled, chunk.length - i);
          if (this.filled === 0 && take === this.length) {
            this.data = chunk.subarray(i, i + take);
          } else {
            this.data ??= Buffer.allocUnsafe(this.length);
            chunk.copy(this.data, this.filled, i, i + take);
          }
          this.filled += take;
          i += take;
          if (this.filled === this.length) this.part = Part.trailer;
          break;
        }
        case Part.trailer:
          if (b !== LF)
            throw new RelpFrameError(
              `RELP frame ${this.txnr} '${this.command}' does not end with LF after its ${this.length} data bytes`,
            );
          frames.push({ txnr: this.txnr, command: this.command, data: this.data ?? Buffer.alloc(0) });
          this.reset();
          i++;
          break;
      }
    }
    return frames;
  }

  private reset(): void {
    this.part = Part.txnr;
    this.digits = 0;
    this.txnr = 0;
    this.command = '';
    this.length = 0;
    this.data = undefined;
    this.filled = 0;
  }
}

/** A response's data: `CODE SP TEXT [LF DATA]`. */
export interface RelpResponse {
  code: number;
  text: string;
  data: string;
}

export function parseRelpResponse(data: Buffer): RelpResponse {
  const s = data.toString('utf8');
  const m = /^(\d{3})(?: ([^\n]*))?(?:\n([\s\S]*))?$/.exec(s);
  if (!m) throw new RelpFrameError(`RELP response '${s.slice(0, 80)}' does not start with a three-digit code`);
  return { code: Number(m[1]), text: m[2] ?? '', data: m[3] ?? '' };
}
