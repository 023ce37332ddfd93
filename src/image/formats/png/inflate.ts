import { damaged } from '../../bytes';

/*
 * The zlib stream of a PNG's image data, inflated by the platform's DecompressionStream and read
 * as it comes. workerd's DecompressionStream has no backpressure: a write inflates all of its input
 * at once into a buffer that grows as needed and never shrinks (api/streams/compression.c++), and
 * deflate expands at most 1032:1. So compressed bytes go in small pieces, and only while a read is
 * waiting: then each piece's output goes straight to that read and the buffer holds at most one
 * piece's output (PIECE_BYTES * 1032, 2 MiB, for a file of zeros; a photo's piece makes ~4 KB).
 * Nothing past the bytes the caller asks for is ever inflated except the rest of the last piece:
 * data after the image's last row is never decompressed.
 */

/** Compressed bytes written at once (see above); 2 KiB pieces cost 3% of a 12 MP decode against 16 KiB (bench/png-codec.ts). */
export const PIECE_BYTES = 2048;
/** Largest inflated bytes one read returns (workerd fills a BYOB read's whole view when it can). */
export const READ_BYTES = 64 * 1024;

type Settled = { ok: true; done: boolean; value: Uint8Array | undefined } | { ok: false; error: unknown };

interface Reader {
  read(): Promise<ReadableStreamReadResult<Uint8Array>>;
  cancel(): Promise<void>;
}

const EMPTY: Uint8Array = new Uint8Array(0);

export class InflatedStream {
  private writer!: WritableStreamDefaultWriter<Uint8Array>;
  private reader!: Reader;
  /** The BYOB read buffer while we hold it (workerd); Node's stream is not a byte stream. */
  private scratch: ArrayBuffer | null = null;
  private byob = false;
  private pending: Promise<void> | null = null;
  private settled: Settled | null = null;
  private writeFailed = false;
  private writerClosed = false;
  private finished = false;

  /** Inflated bytes received and not yet handed out. */
  private chunk: Uint8Array = EMPTY;
  private at = 0;
  /** Inflated bytes received in all, and how many of a restarted stream's first bytes to drop. */
  private received = 0;
  private discard = 0;

  /** Compressed bytes written, and where the input stands: the part being read and the offset in it. */
  private fed = 0;
  private parts!: Iterator<Uint8Array>;
  private part: Uint8Array = EMPTY;
  private partAt = 0;
  private inputEnded = false;
  private lastWrite = { from: 0, to: 0 };
  /** After a restart: the failed write's bytes, written one at a time. */
  private oneByteFrom = 0;
  private oneByteUntil = 0;
  private restarted = false;
  private joined: Uint8Array | null = null;

  /** `input` gives the compressed bytes in parts (a PNG's IDAT chunks), afresh on each call. */
  constructor(
    private readonly input: () => Iterator<Uint8Array>,
    private readonly pieceBytes = PIECE_BYTES,
  ) {
    this.rewind();
    this.open();
  }

  /** Fills `target` with the next inflated bytes; false when the stream ended first. Damage throws. */
  async fill(target: Uint8Array): Promise<boolean> {
    let filled = 0;
    while (filled < target.length) {
      if (this.at === this.chunk.length && !(await this.nextChunk())) return false;
      const n = Math.min(target.length - filled, this.chunk.length - this.at);
      target.set(this.chunk.subarray(this.at, this.at + n), filled);
      this.at += n;
      filled += n;
    }
    return true;
  }

  /** Drops the next `count` inflated bytes; false when the stream ended first. */
  async skip(count: number): Promise<boolean> {
    let left = count;
    while (left > 0) {
      if (this.at === this.chunk.length && !(await this.nextChunk())) return false;
      const n = Math.min(left, this.chunk.length - this.at);
      this.at += n;
      left -= n;
    }
    return true;
  }

  /** Stops inflating and releases the stream; safe to call more than once. */
  close(): void {
    if (this.finished) return;
    this.finished = true;
    this.release();
    this.chunk = EMPTY;
    this.scratch = null;
    this.joined = null;
  }

  /** Bytes of JavaScript buffers held (the read buffer and a piece joined from small IDATs). */
  heldBytes(): number {
    return this.finished ? 0 : (this.byob ? READ_BYTES : this.chunk.length) + (this.joined?.length ?? 0);
  }

  private open(): void {
    const stream = new DecompressionStream('deflate');
    this.writer = stream.writable.getWriter();
    try {
      this.reader = (stream.readable as ReadableStream<Uint8Array>).getReader({ mode: 'byob' }) as unknown as Reader;
      this.byob = true;
      this.scratch ??= new ArrayBuffer(READ_BYTES);
    } catch {
      // Node's DecompressionStream is not a byte stream (the fuzz suite runs there).
      this.reader = stream.readable.getReader();
      this.byob = false;
    }
    this.pending = null;
    this.settled = null;
    this.writeFailed = false;
    this.writerClosed = false;
  }

  private release(): void {
    // Every promise gets a handler: a stream cancelled early must not report unhandled rejections.
    this.reader.cancel().catch(() => {});
    this.writer.abort().catch(() => {});
    this.pending?.catch(() => {});
  }

  private startRead(): void {
    const read = this.byob
      ? (this.reader as unknown as ReadableStreamBYOBReader).read(new Uint8Array(this.scratch!))
      : this.reader.read();
    this.scratch = null;
    this.pending = read.then(
      ({ done, value }) => {
        this.settled = { ok: true, done, value };
      },
      (error: unknown) => {
        this.settled = { ok: false, error };
      },
    );
  }

  private async nextChunk(): Promise<boolean> {
    if (this.finished) throw new Error('png: read after close');
    for (;;) {
      if (this.pending === null) this.startRead();
      const settled = this.settled;
      if (settled !== null) {
        this.settled = null;
        this.pending = null;
        if (!settled.ok) {
          this.recover(settled.error);
          continue;
        }
        if (this.byob) this.scratch = settled.value?.buffer instanceof ArrayBuffer ? settled.value.buffer : new ArrayBuffer(READ_BYTES);
        if (settled.done) return false;
        let value = settled.value!;
        this.received += value.length;
        if (this.discard > 0) {
          const dropped = Math.min(this.discard, value.length);
          this.discard -= dropped;
          value = value.subarray(dropped);
          if (value.length === 0) continue;
        }
        this.chunk = value;
        this.at = 0;
        return true;
      }
      // The read waits: the inflater has nothing buffered, so it may take the next piece.
      if (this.writeFailed) await this.pending;
      else if (!this.inputEnded) await this.writePiece();
      else if (!this.writerClosed) await this.closeWriter();
      else await this.pending;
    }
  }

  private async writePiece(): Promise<void> {
    // Up to a failed write, whole pieces again (never past its start); its own bytes one by one.
    const size =
      this.fed >= this.oneByteUntil ? this.pieceBytes
      : this.fed >= this.oneByteFrom ? 1
      : Math.min(this.pieceBytes, this.oneByteFrom - this.fed);
    const piece = this.takeInput(size);
    this.lastWrite = { from: this.fed, to: this.fed + piece.length };
    this.fed += piece.length;
    await this.writer.write(piece).catch(() => {
      this.writeFailed = true;
    });
  }

  /** The next `size` compressed bytes (fewer at the end): a view of one part, or joined from several small ones. */
  private takeInput(size: number): Uint8Array {
    if (this.part.length - this.partAt >= size) return this.advance(size);
    this.joined ??= new Uint8Array(this.pieceBytes);
    let filled = 0;
    while (filled < size && !this.inputEnded) {
      const n = Math.min(size - filled, this.part.length - this.partAt);
      this.joined.set(this.advance(n), filled);
      filled += n;
    }
    // A fresh copy each time: Node may still hold the previous piece (its writes complete later).
    return this.joined.slice(0, filled);
  }

  /** The next `count` bytes of the current part, moving on to the next part with bytes at its end. */
  private advance(count: number): Uint8Array {
    const view = this.part.subarray(this.partAt, this.partAt + count);
    this.partAt += count;
    while (this.partAt === this.part.length && !this.inputEnded) {
      const next = this.parts.next();
      if (next.done) this.inputEnded = true;
      else [this.part, this.partAt] = [next.value, 0];
    }
    return view;
  }

  private rewind(): void {
    this.parts = this.input();
    this.part = EMPTY;
    this.partAt = 0;
    this.inputEnded = false;
    this.advance(0);
  }

  private async closeWriter(): Promise<void> {
    this.writerClosed = true;
    await this.writer.close().catch(() => {
      this.writeFailed = true;
    });
  }

  /**
   * workerd fails a write whose input runs past the end of the zlib stream ("Trailing bytes after
   * end of compressed data") and drops everything that write inflated. libpng ignores such bytes,
   * so the stream is inflated once more from the start, dropping what was already handed out,
   * and the failed write's bytes go in one at a time: the image's last bytes then arrive before
   * the failure. A second failure (or one at the end of the input) is damage.
   */
  private recover(error: unknown): void {
    if (this.restarted || this.writerClosed) throw damaged(`png: image data: ${String(error)}`);
    this.restarted = true;
    this.release();
    this.discard = this.received;
    this.received = 0;
    this.oneByteUntil = this.lastWrite.to;
    this.fed = 0;
    this.rewind();
    this.chunk = EMPTY;
    this.at = 0;
    this.oneByteFrom = this.lastWrite.from;
    this.open();
  }
}
