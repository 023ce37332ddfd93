import { AppError } from '../errors';
import type { RowEncoder, RowSource, EncodeOptions } from './stages/rows';
import type { ResultSink, ResultTarget } from './result-sink';
import type { ImageFormat } from './types';

/** ES2024 resizable ArrayBuffer (the project's TypeScript lib predates its types). */
interface ResizableArrayBuffer extends ArrayBuffer {
  resize(byteLength: number): void;
  readonly maxByteLength: number;
}
const Resizable = ArrayBuffer as unknown as new (byteLength: number, options: { maxByteLength: number }) => ResizableArrayBuffer;

const GROWTH_BYTES = 1 << 20;

/** A result that outgrew the room the memory plan gave it (`needed`: as far as it got, if known). */
export function resultTooLarge(maxBytes: number, needed?: number): AppError {
  return new AppError(
    'FILE_TOO_LARGE',
    `The result would be larger than ${Math.floor(maxBytes / 2 ** 20)} MB, more than a Worker can hold for it; ask for a smaller size or a lower quality.`,
    { maxBytes, needed },
  );
}

/**
 * An encoder's output held in memory: one ArrayBuffer that grows in place (a megabyte at a time)
 * up to a cap, so a finished file is held once (never as chunks beside their joined copy). The cap
 * is the bound the memory plan counted for the result; writing past it is refused, so a run never
 * holds more than was predicted for it.
 */
export class ResultBuffer implements ResultSink {
  private buffer: ResizableArrayBuffer | null = null;
  private owned: Uint8Array | null = null;
  private used = 0;

  constructor(readonly maxBytes: number) {}

  get length(): number {
    return this.used;
  }

  get heldBytes(): number {
    return this.owned?.byteLength ?? this.buffer?.byteLength ?? 0;
  }

  /** It only grows. */
  get peakHeldBytes(): number {
    return this.heldBytes;
  }

  write(chunk: Uint8Array): void {
    const end = this.used + chunk.byteLength;
    if (end > this.maxBytes) throw resultTooLarge(this.maxBytes, end);
    if (this.owned) this.adoptCopy();
    this.buffer ??= new Resizable(Math.min(this.maxBytes, Math.max(end, GROWTH_BYTES)), { maxByteLength: this.maxBytes });
    if (end > this.buffer.byteLength) this.buffer.resize(Math.min(this.maxBytes, Math.max(end, this.buffer.byteLength + GROWTH_BYTES)));
    new Uint8Array(this.buffer, this.used, chunk.byteLength).set(chunk);
    this.used = end;
  }

  writeOwned(bytes: Uint8Array): void {
    if (this.used > 0) return this.write(bytes);
    if (bytes.byteLength > this.maxBytes) throw resultTooLarge(this.maxBytes, bytes.byteLength);
    this.owned = bytes;
    this.used = bytes.byteLength;
  }

  async drain(): Promise<void> {}

  /** The bytes written so far, without copying. */
  bytes(): Uint8Array {
    if (this.owned) return this.owned;
    return this.buffer ? new Uint8Array(this.buffer, 0, this.used) : new Uint8Array(0);
  }

  private adoptCopy(): void {
    const owned = this.owned!;
    this.owned = null;
    this.used = 0;
    this.write(owned);
  }
}

/** Results kept in memory: the sink holds the whole file. */
export function memoryTarget(): ResultTarget & { buffer: () => ResultBuffer | null } {
  let buffer: ResultBuffer | null = null;
  return {
    heldBytes: (fileBytes) => fileBytes,
    open(_format: ImageFormat, maxBytes: number) {
      buffer = new ResultBuffer(maxBytes);
      return buffer;
    },
    buffer: () => buffer,
  };
}

/** What most callers outside the service want of an encoder: the file's bytes (at most `maxBytes`). */
export async function encodeToBytes(encoder: RowEncoder, source: RowSource, options: EncodeOptions, maxBytes = 512 * 2 ** 20): Promise<Uint8Array> {
  const sink = new ResultBuffer(maxBytes);
  await encoder.encode(source, options, sink);
  return sink.bytes();
}
