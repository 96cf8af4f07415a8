/**
 * RFC 6587 TCP framing, detected per frame: octet counting (`LEN SP MSG`) when a frame starts with a
 * digit, else a frame ends at LF (or NUL). A frame over the cap, or a count that is not a sane
 * number, is an error after which the caller closes the connection: memory never holds more than
 * the cap plus one chunk.
 */
export class FrameError extends Error {
  override readonly name = 'FrameError';
}

export class FrameDecoder {
  private buf: Buffer = Buffer.alloc(0);

  constructor(private readonly maxFrame: number) {}

  /** Adds bytes; returns the complete frames. Throws FrameError when the stream cannot be trusted. */
  push(chunk: Buffer): Buffer[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const frames: Buffer[] = [];
    for (;;) {
      if (this.buf.length === 0) break;
      const first = this.buf[0]!;
      if (first === 0x0a || first === 0x0d || first === 0x00) {
        this.buf = this.buf.subarray(1);
        continue;
      }
      if (first >= 0x30 && first <= 0x39) {
        const sp = this.buf.indexOf(0x20);
        if (sp < 0) {
          if (this.buf.length > 10) throw new FrameError('octet count is too long');
          break;
        }
        const count = this.buf.subarray(0, sp).toString('latin1');
        if (!/^[1-9]\d{0,9}$/.test(count)) throw new FrameError(`'${count.slice(0, 12)}' is not an octet count`);
        const len = Number(count);
        if (len > this.maxFrame) throw new FrameError(`frame of ${len} bytes is over the limit of ${this.maxFrame}`);
        if (this.buf.length < sp + 1 + len) break;
        frames.push(this.buf.subarray(sp + 1, sp + 1 + len));
        this.buf = this.buf.subarray(sp + 1 + len);
        continue;
      }
      let end = this.buf.indexOf(0x0a);
      const nul = this.buf.indexOf(0x00);
      if (nul >= 0 && (end < 0 || nul < end)) end = nul;
      if (end < 0) {
        if (this.buf.length > this.maxFrame) throw new FrameError(`frame is over the limit of ${this.maxFrame} bytes without a line end`);
        break;
      }
      let frame = this.buf.subarray(0, end);
      if (frame[frame.length - 1] === 0x0d) frame = frame.subarray(0, frame.length - 1);
      frames.push(frame);
      this.buf = this.buf.subarray(end + 1);
    }
    // keep our own copy of a small tail, not a view pinning a large chunk
    if (this.buf.length > 0 && this.buf.length < 4096) this.buf = Buffer.from(this.buf);
    return frames;
  }
}
