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

  add(memory: WebAssembly.Memory): void {
    this.live.add(memory);
  }

  release(memory: WebAssembly.Memory): void {
    if (this.live.delete(memory)) this.released += memory.buffer.byteLength;
  }

  liveBytes(): number {
    let total = 0;
    for (const memory of this.live) total += memory.buffer.byteLength;
    return total;
  }

  /** Live instances plus those dropped since the last call: what codecs held since then, at most. */
  take(): number {
    const total = this.liveBytes() + this.released;
    this.released = 0;
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

/** Bytes of the codec instances alive now in the isolate. */
export function liveCodecMemoryBytes(): number {
  return isolate.liveBytes();
}

/** Live instances in the isolate plus those dropped since the last call. */
export function takeCodecMemoryBytes(): number {
  return isolate.take();
}
