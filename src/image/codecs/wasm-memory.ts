/**
 * The WebAssembly memories of the codec instances, for measuring what the pipeline holds
 * (memory-meter.ts). A wasm memory only grows, so its size when its instance is dropped is that
 * instance's peak; it is remembered as a number (no reference, so the memory can be collected)
 * until the meter next samples, because the largest moment is a codec's output beside its memory.
 */
const live = new Set<WebAssembly.Memory>();
let releasedBytes = 0;

/** Counts `memory` until the returned function is called (when its instance is dropped). */
export function trackMemory(memory: WebAssembly.Memory): () => void {
  live.add(memory);
  return () => {
    if (live.delete(memory)) releasedBytes += memory.buffer.byteLength;
  };
}

/** Bytes of the codec instances alive now. */
export function liveCodecMemoryBytes(): number {
  let total = 0;
  for (const memory of live) total += memory.buffer.byteLength;
  return total;
}

/** Live instances plus those dropped since the last call: what codecs held since then, at most. */
export function takeCodecMemoryBytes(): number {
  const total = liveCodecMemoryBytes() + releasedBytes;
  releasedBytes = 0;
  return total;
}
