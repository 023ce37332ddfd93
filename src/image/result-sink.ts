import type { ImageFormat } from './types';

/**
 * Where an encoder writes its file as it is made (libvips' VipsTarget): into memory
 * (result-buffer.ts) or on to storage in parts (src/storage/result-upload.ts).
 */
export interface ResultSink {
  /**
   * Takes the file's next bytes and copies them, so the chunk may be reused at once. Synchronous,
   * as codecs call it from inside WebAssembly; what it sends on goes out at the next `drain()`.
   */
  write(chunk: Uint8Array): void;
  /**
   * Takes the file's next bytes without copying them: the caller never changes them again (a
   * finished file, such as a lossless strip's).
   */
  writeOwned(bytes: Uint8Array): void;
  /** Resolves once what was handed on has gone (parts stored); encoders wait here between bands. */
  drain(): Promise<void>;
  /** Bytes written so far. */
  readonly length: number;
  /** Bytes the sink holds in memory now (the memory meter samples it). */
  readonly heldBytes: number;
  /** The most it held at once (writes inside a codec call happen between the meter's samples). */
  readonly peakHeldBytes: number;
}

/** Where a run's result goes: the sink, opened once the output format is known, and what it holds. */
export interface ResultTarget {
  /**
   * Most bytes a sink holds for a file of at most `fileBytes` that an encoder writes with at most
   * `burstBytes` between two drains (the memory plan counts it).
   */
  heldBytes(fileBytes: number, burstBytes: number): number;
  /**
   * A sink for a file of at most `maxBytes` (more is refused with FILE_TOO_LARGE); `pace`, if
   * given, is awaited before the sink sends what it holds on (the run's turn: src/image/run-context.ts).
   */
  open(format: ImageFormat, maxBytes: number, pace?: () => Promise<void>): ResultSink;
}
