import kernelsModule from '../codecs/wasm/kernels.wasm';

/*
 * The pipeline's own WebAssembly kernels (codecs/kernels: the resize passes, blur, sharpen,
 * grayscale) import their memory and have no allocator: each stage lays out its buffers in a memory
 * of its own, of exactly the layout's size, which is also what the memory plan counts (WebAssembly
 * memory never shrinks, so none is shared or pooled).
 */

const PAGE_BYTES = 65_536;
/**
 * Where the buffers start: below lie the module's own static data and its 4 KiB stack (which the
 * kernels do not use; codecs/kernels/build.sh checks that they end below this).
 */
const RESERVED_BYTES = 8192;
/**
 * Bytes readable and writable past every buffer: the kernels work in vectors of 16 bytes, and the
 * resize's horizontal pass reads one pixel past an output's last tap.
 */
const SLACK_BYTES = 16;

const align = (n: number) => Math.ceil(n / 16) * 16;

/** Buffers laid out one after another, each 16-byte aligned with SLACK_BYTES after it. */
export class KernelLayout {
  private at = RESERVED_BYTES;

  /** Room for `bytes`; returns its offset. */
  take(bytes: number): number {
    const start = this.at;
    this.at += align(bytes + SLACK_BYTES);
    return start;
  }

  /** The memory the layout needs: whole pages. */
  get bytes(): number {
    return Math.ceil(this.at / PAGE_BYTES) * PAGE_BYTES;
  }
}

/** A fresh instance of the kernels on a memory of `bytes` (a KernelLayout's), and that memory. */
export function kernelInstance<Exports>(bytes: number): { exports: Exports; memory: WebAssembly.Memory } {
  const memory = new WebAssembly.Memory({ initial: bytes / PAGE_BYTES, maximum: bytes / PAGE_BYTES });
  const exports = new WebAssembly.Instance(kernelsModule, { env: { memory } }).exports as unknown as Exports & { stackSave(): number };
  if (exports.stackSave() > RESERVED_BYTES) throw new Error('kernels: the module reaches into the buffers');
  return { exports, memory };
}
