import { AppError } from '../errors';

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
 * An encoder's output as it is written: one ArrayBuffer that grows in place up to a cap, so a
 * finished file is held once (never as chunks beside their joined copy). The cap is the bound the
 * memory plan counted for the result; writing past it is refused, so a run never holds more than
 * was predicted for it.
 */
export class ResultBuffer {
  private readonly buffer: ResizableArrayBuffer;
  private used = 0;

  constructor(readonly maxBytes: number) {
    this.buffer = new Resizable(Math.min(maxBytes, GROWTH_BYTES), { maxByteLength: maxBytes });
  }

  get length(): number {
    return this.used;
  }

  append(chunk: Uint8Array): void {
    const end = this.used + chunk.byteLength;
    if (end > this.buffer.byteLength) {
      if (end > this.maxBytes) throw resultTooLarge(this.maxBytes, end);
      // Grown in place (no copy) a megabyte at a time, so it never holds much more than it was given.
      this.buffer.resize(Math.min(this.maxBytes, Math.max(end, this.buffer.byteLength + GROWTH_BYTES)));
    }
    new Uint8Array(this.buffer, this.used, chunk.byteLength).set(chunk);
    this.used = end;
  }

  /** The bytes written so far, without copying. */
  bytes(): Uint8Array {
    return new Uint8Array(this.buffer, 0, this.used);
  }
}
