import metricModule from '../codecs/wasm/metric.wasm';
import { trackMemory } from '../codecs/wasm-memory';
import { blurRadius, blurWeights } from './recursive-gaussian';
import { combine, normsOf, scaleCount } from './ssimulacra2';

/*
 * SSIMULACRA 2 in WebAssembly SIMD (codecs/metric/ssimulacra2.c): what ssimulacra2.ts computes,
 * 5-6 times as fast (docs/performance.md, "quality=auto"), which the service scores with; the
 * TypeScript one is the kernel's reference in its test. The kernel lays out its rows in its own
 * memory; rows of both pictures are copied in one at a time.
 */

const PAGE_BYTES = 65_536;
/** Where the kernel's buffers start: below lie its static data and its stack (codecs/metric/build.sh checks they end below). */
const RESERVED_BYTES = 32_768;

interface Exports {
  memory?: WebAssembly.Memory;
  ssim2_bytes(width: number, height: number): number;
  ssim2_init(base: number, width: number, height: number, n21: number, n23: number, n25: number, d11: number, d13: number, d15: number): number;
  ssim2_row(context: number, picture: number): number;
  ssim2_sums(context: number): number;
  ssim2_scales(context: number): number;
  ssim2_push(context: number): void;
  ssim2_finish(context: number): void;
}

/** The kernel's memory for pictures of this size (its buffers and what lies below them), in bytes: about 3.7 KB a column. */
export function ssimulacra2KernelBytes(width: number, height: number): number {
  // The first scale holds about 1.8 KB a column (five vectors of four lanes in eleven rows of the
  // ring, the filters' six states and three rows), each next one half as much: 3.7 KB a column in all.
  sizer ??= instance(1).k;
  return pagesFor(sizer.ssim2_bytes(width, height)) * PAGE_BYTES;
}

/** An instance kept only to ask the kernel's layout its size. */
let sizer: Exports | undefined;

const pagesFor = (bytes: number) => Math.ceil((RESERVED_BYTES + bytes) / PAGE_BYTES);

function instance(pages: number): { k: Exports; memory: WebAssembly.Memory } {
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  const k = new WebAssembly.Instance(metricModule, { env: { memory } }).exports as unknown as Exports;
  return { k, memory };
}

/** The score of two pictures of the same size, fed in bands of rows (the API of ssimulacra2.ts's Ssimulacra2). */
export class Ssimulacra2Kernel {
  private readonly k: Exports;
  private readonly heap: Uint8Array;
  private readonly context: number;
  private readonly rowAt: [number, number];
  private readonly bytes: number;
  private release: (() => void) | null;
  private y = 0;

  constructor(
    readonly width: number,
    readonly height: number,
  ) {
    if (!(width >= 1 && height >= 1)) throw new Error(`ssimulacra2: no picture (${width}x${height})`);
    this.bytes = ssimulacra2KernelBytes(width, height);
    const { k, memory } = instance(this.bytes / PAGE_BYTES);
    this.k = k;
    this.release = trackMemory(memory);
    this.heap = new Uint8Array(memory.buffer);
    const { n2, d1 } = blurWeights();
    if (blurRadius() !== 5) throw new Error('ssimulacra2: the kernel is built for a blur radius of 5');
    this.context = k.ssim2_init(RESERVED_BYTES, width, height, n2[0], n2[1], n2[2], d1[0], d1[1], d1[2]);
    this.rowAt = [k.ssim2_row(this.context, 0), k.ssim2_row(this.context, 1)];
    if (k.ssim2_scales(this.context) !== scaleCount(width, height)) throw new Error('ssimulacra2: the kernel counts other scales');
  }

  /** Bytes of the kernel's memory (ssimulacra2KernelBytes). */
  heldBytes(): number {
    return this.release ? this.bytes : 0;
  }

  /** The next `rows` rows of both pictures, RGBA 8-bit, `width` pixels a row (the original first). */
  push(original: Uint8Array, distorted: Uint8Array, rows: number): void {
    if (this.y + rows > this.height) throw new Error(`ssimulacra2: ${this.y + rows} rows pushed, the picture has ${this.height}`);
    const stride = this.width * 4;
    if (original.length < rows * stride || distorted.length < rows * stride) throw new Error('ssimulacra2: a band is shorter than its rows');
    for (let r = 0; r < rows; r++, this.y++) {
      this.heap.set(original.subarray(r * stride, (r + 1) * stride), this.rowAt[0]);
      this.heap.set(distorted.subarray(r * stride, (r + 1) * stride), this.rowAt[1]);
      this.k.ssim2_push(this.context);
    }
  }

  /** The score once every row was pushed; the kernel's memory is let go. */
  score(): number {
    if (this.y !== this.height) throw new Error(`ssimulacra2: ${this.y} of ${this.height} rows were pushed`);
    this.k.ssim2_finish(this.context);
    const count = this.k.ssim2_scales(this.context);
    const sums = new Float64Array(this.heap.buffer, this.k.ssim2_sums(this.context), 6 * 18);
    const scales: number[][] = [];
    for (let s = 0, w = this.width, h = this.height; s < count; s++, w = Math.ceil(w / 2), h = Math.ceil(h / 2)) {
      scales.push(normsOf(sums.subarray(s * 18, s * 18 + 18), w * h));
    }
    this.close();
    return combine(scales);
  }

  /** Lets the kernel's memory go (the run stops counting it); score() does, and a run that fails must. */
  close(): void {
    this.release?.();
    this.release = null;
  }
}
