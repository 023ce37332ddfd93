/**
 * Warm memories for fresh codec instances.
 *
 * The first write to a page of new memory costs a page fault, and on the VMs we measure on one
 * costs ~20 µs per 4 KiB: a 12 MP JPEG encode with optimised tables fills a 36 MB coefficient
 * buffer, ~180 ms of faults against ~90 ms of work. A native allocator hands a freed block to the
 * next job without new faults; this does the same for WebAssembly. A module built with imported
 * memory (codecs/build.sh) can be given a memory an earlier instance in the same role used, zeroed
 * over what that instance wrote: to the new instance it is exactly a new memory (all zeros, at
 * least its initial size), and nothing of an earlier job's pixels is left in it.
 *
 * An idle memory is memory the isolate holds for nobody, so the pool keeps one per role, at most
 * `maxIdleBytes` in all, and gives all of it up when a run needs the room (`drain`, called by the
 * memory admission).
 *
 * A lent memory can be larger than what its new instance counts (a 1 MP job in the memory a 12 MP
 * one grew): the pages above are zeroed, so they are resident, yet no run's prediction covers
 * them. The pool reports that excess (`lentExcessBytes`) for the admission to count beside the
 * runs, and says when a lent memory comes back (`onReturn`).
 */
export class MemoryPool {
  private readonly idle = new Map<string, WebAssembly.Memory>();
  /** Memories taken from the pool, and what their instances count of them. */
  private readonly lent = new Map<WebAssembly.Memory, () => number>();
  private readonly returnListeners = new Set<() => void>();

  constructor(private readonly maxIdleBytes: number) {}

  /**
   * Records that `memory`, taken from the pool, now serves an instance that counts `counted()` bytes
   * of it, until the returned function is called (the instance released).
   */
  lend(memory: WebAssembly.Memory, counted: () => number): () => void {
    this.lent.set(memory, counted);
    return () => {
      if (!this.lent.delete(memory)) return;
      for (const listener of this.returnListeners) listener();
    };
  }

  /** Bytes of lent memories that their instances do not count. */
  get lentExcessBytes(): number {
    let total = 0;
    for (const [memory, counted] of this.lent) total += Math.max(0, memory.buffer.byteLength - counted());
    return total;
  }

  /** Calls `listener` whenever a lent memory's instance is done with it. */
  onReturn(listener: () => void): void {
    this.returnListeners.add(listener);
  }

  /** The idle memory last released in `role`, if any; it is all zeros. */
  take(role: string): WebAssembly.Memory | undefined {
    const memory = this.idle.get(role);
    this.idle.delete(role);
    return memory;
  }

  /**
   * Takes back `memory` from an instance that is done with it and wrote nothing at or above
   * `dirtyBytes`. A larger memory than the pool can keep is left to the garbage collector.
   */
  give(role: string, memory: WebAssembly.Memory, dirtyBytes: number): void {
    const size = memory.buffer.byteLength;
    if (size > this.maxIdleBytes) return;
    new Uint8Array(memory.buffer, 0, Math.min(Math.max(dirtyBytes, 0), size)).fill(0);
    this.idle.delete(role);
    while (this.idleBytes + size > this.maxIdleBytes) this.dropLargest();
    this.idle.set(role, memory);
  }

  /** Bytes of the memories waiting for their next instance. */
  get idleBytes(): number {
    let total = 0;
    for (const memory of this.idle.values()) total += memory.buffer.byteLength;
    return total;
  }

  /** Lets every idle memory go (to the garbage collector), for a run that needs the room. */
  drain(): void {
    this.idle.clear();
  }

  private dropLargest(): void {
    let largest: [string, number] | undefined;
    for (const [role, memory] of this.idle) {
      if (!largest || memory.buffer.byteLength > largest[1]) largest = [role, memory.buffer.byteLength];
    }
    if (largest) this.idle.delete(largest[0]);
  }
}

/**
 * The isolate's pool. 48 MiB holds what a 12 MP JPEG re-encode leaves (its decoder's memory and its
 * encoder's, with the coefficient buffer); larger memories are rare enough that their faults are
 * a small share of their work.
 */
export const codecMemoryPool = new MemoryPool(48 * 2 ** 20);
