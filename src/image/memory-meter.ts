import { codecMemoryBytes } from './codecs/wasm-memory';

/**
 * What one pipeline run holds at its fullest: the pixel and byte buffers alive at each step plus
 * every codec's WebAssembly memory. Sampled at step boundaries, where a step's input and output
 * are both alive; a wasm memory never shrinks, so sampling after a codec call sees its peak.
 */
export class MemoryMeter {
  peakBytes = 0;

  note(...views: (ArrayBufferView | undefined)[]): void {
    const buffers = new Set(views.filter((view) => view !== undefined).map((view) => view.buffer));
    let bytes = codecMemoryBytes();
    for (const buffer of buffers) bytes += buffer.byteLength;
    if (bytes > this.peakBytes) this.peakBytes = bytes;
  }
}
