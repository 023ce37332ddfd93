import { currentRun } from '../run-context';

/**
 * The WebAssembly memories of codec instances, for measuring what a pipeline run holds
 * (memory-meter.ts). A wasm memory only grows, so its size when its instance is dropped is that
 * instance's peak; it is remembered as a number (no reference, so the memory can be collected)
 * until the next look, because the largest moment is a codec's output beside its memory.
 */
export class WasmLedger {
  private readonly live = new Set<WebAssembly.Memory>();
  private released = 0;
  /** JavaScript buffers a codec keeps outside its memory (trackBuffer), now and at most since the last look. */
  private buffers = 0;
  private buffersPeak = 0;

  add(memory: WebAssembly.Memory): void {
    this.live.add(memory);
  }

  release(memory: WebAssembly.Memory): void {
    if (this.live.delete(memory)) this.released += memory.buffer.byteLength;
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
    for (const memory of this.live) total += memory.buffer.byteLength;
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
 * Counts `memory` until the returned function is called (when its instance is dropped), in the
 * isolate's ledger and in that of the pipeline run whose async context created it (run-context.ts).
 */
export function trackMemory(memory: WebAssembly.Memory): () => void {
  const run = currentRun()?.ledger;
  isolate.add(memory);
  run?.add(memory);
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
