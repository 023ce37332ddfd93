/**
 * The WebAssembly memories of the codec instances, for measuring what the pipeline holds.
 * A wasm memory only grows: after one 12 MP decode the decoder keeps ~55 MB for as long as its
 * instance lives, so large jobs are followed by a fresh instance (see codec.ts).
 */
const live = new Set<WeakRef<WebAssembly.Memory>>();

export function trackMemory(exports: WebAssembly.Exports): WebAssembly.Memory | undefined {
  const memory = Object.values(exports).find((value): value is WebAssembly.Memory => value instanceof WebAssembly.Memory);
  if (memory) live.add(new WeakRef(memory));
  return memory;
}

/** Bytes of every codec memory not yet collected (released instances count until the GC runs). */
export function codecMemoryBytes(): number {
  let total = 0;
  for (const ref of live) {
    const memory = ref.deref();
    if (memory) total += memory.buffer.byteLength;
    else live.delete(ref);
  }
  return total;
}
