import { currentRun } from '../run-context';

/**
 * The WebAssembly memories of codec instances, for measuring what a pipeline run holds
 * (memory-meter.ts). What an instance holds only grows, so its size when its instance is dropped
 * is that instance's peak; it is remembered as a number (no reference, so the memory can be
 * collected) until the next look, because the largest moment is a codec's output beside its memory.
 * An instance's size is its memory's, or, in a larger memory from the pool (memory-pool.ts), what
 * a new memory would have grown to.
 */
export class WasmLedger {
  private readonly live = new Map<WebAssembly.Memory, () => number>();
  private released = 0;
  /** JavaScript buffers a codec keeps outside its memory (trackBuffer), now and at most since the last look. */
  private buffers = 0;
  private buffersPeak = 0;

  add(memory: WebAssembly.Memory, bytes: () => number): void {
    this.live.set(memory, bytes);
  }

  release(memory: WebAssembly.Memory): void {
    const bytes = this.live.get(memory);
    if (!bytes) return;
    this.released += bytes();
    this.live.delete(memory);
  }

  holdBuffer(bytes: number): void {
    this.buffers += bytes;
    this.buffersPeak = Math.max(this.buffersPeak, this.buffers);
  }

  dropBuffer(bytes: number): void {
    this.buffers -= bytes;
  }

  liveBytes(): number {
    let total = 0;
    for (const bytes of this.live.values()) total += bytes();
    return total;
  }

  /** Live instances plus those dropped since the last call, and codecs' buffers: what codecs held since then, at most. */
  take(): number {
    const total = this.liveBytes() + this.released + this.buffersPeak;
    this.released = 0;
    this.buffersPeak = this.buffers;
    return total;
  }
}

/** Every instance in the isolate. */
const isolate = new WasmLedger();

/**
 * Counts `memory` (`bytes()` of it) until the returned function is called (when its instance is
 * dropped), in the isolate's ledger and in that of the pipeline run whose async context created it
 * (run-context.ts).
 */
export function trackMemory(memory: WebAssembly.Memory, bytes: () => number = () => memory.buffer.byteLength): () => void {
  const run = currentRun()?.ledger;
  isolate.add(memory, bytes);
  run?.add(memory, bytes);
  return () => {
    isolate.release(memory);
    run?.release(memory);
  };
}

/**
 * Counts `bytes` of JavaScript buffers a codec keeps beside its instance (the AVIF encoder's
 * encoded tiles) in the current pipeline run until the returned function is called.
 */
export function trackBuffer(bytes: number): () => void {
  const run = currentRun()?.ledger;
  run?.holdBuffer(bytes);
  return () => run?.dropBuffer(bytes);
}

/** Bytes of the codec instances alive now in the isolate. */
export function liveCodecMemoryBytes(): number {
  return isolate.liveBytes();
}

/** Live instances in the isolate plus those dropped since the last call. */
export function takeCodecMemoryBytes(): number {
  return isolate.take();
}
