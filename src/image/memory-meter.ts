import { takeCodecMemoryBytes } from './codecs/wasm-memory';

/**
 * What one pipeline run holds at its fullest: the pixel and byte buffers alive at each step plus
 * every codec's WebAssembly memory. Sampled at step boundaries, where a step's input and output
 * are both alive; a codec instance dropped since the last sample counts at its peak (wasm-memory.ts).
 */
export class MemoryMeter {
  peakBytes = 0;

  constructor() {
    // Codec work finished before this run (another caller's) is not this run's memory.
    takeCodecMemoryBytes();
  }

  note(...views: (ArrayBufferView | undefined)[]): void {
    const buffers = new Set(views.filter((view) => view !== undefined).map((view) => view.buffer));
    let bytes = takeCodecMemoryBytes();
    for (const buffer of buffers) bytes += buffer.byteLength;
    if (bytes > this.peakBytes) this.peakBytes = bytes;
  }
}
