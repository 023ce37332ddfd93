import { doWork } from '../run-context';
import type { Band, RowSource } from '../stages/rows';
import { Ssimulacra2Kernel, ssimulacra2KernelBytes } from './ssimulacra2-kernels';

/**
 * SSIMULACRA 2 (the WebAssembly kernel) of two row sources of the same size read in step (the encoder's input rows against
 * the result decoded), closing both. Bands of different heights are lined up a row at a time: what
 * is held is the metric's rows (scoreRowsBytes) and one band of each source.
 */
export async function scoreRows(original: RowSource, distorted: RowSource): Promise<number> {
  try {
    if (original.width !== distorted.width || original.height !== distorted.height) {
      throw new Error(`score: ${original.width}x${original.height} against ${distorted.width}x${distorted.height}`);
    }
    const { width, height } = original;
    const metric = new Ssimulacra2Kernel(width, height);
    try {
      const a = new RowReader(original);
      const b = new RowReader(distorted);
      for (let y = 0; y < height; ) {
        const rows = Math.min(await a.available(y), await b.available(y));
        metric.push(a.rows(y), b.rows(y), rows);
        y += rows;
        // Other requests in the isolate get their turns between rows (run-context.ts).
        const turn = doWork(rows * width * METRIC_NS_PER_PIXEL);
        if (turn) await turn;
      }
      return metric.score();
    } finally {
      metric.close();
    }
  } finally {
    original.close();
    distorted.close();
  }
}

/** The kernel's work a pixel, in nanoseconds (docs/performance.md: 170-230 ms a megapixel in Node). */
const METRIC_NS_PER_PIXEL = 200;

/** Bytes scoreRows holds beside its sources' own bands: the metric's memory (about 3.7 KB a column). */
export function scoreRowsBytes(width: number, height: number): number {
  return ssimulacra2KernelBytes(width, height);
}

/** A source's rows from a given row on, within the band that holds it. */
class RowReader {
  private band: Band | null = null;

  constructor(private readonly source: RowSource) {}

  /** How many rows from `y` on the current band holds (reading the next band when it holds none). */
  async available(y: number): Promise<number> {
    while (!this.band || y >= this.band.y + this.band.rows) {
      this.band = await this.source.read();
      if (!this.band) throw new Error(`score: a source ended at row ${y} of ${this.source.height}`);
      if (this.band.y > y) throw new Error(`score: a band starts at row ${this.band.y}, row ${y} was due`);
    }
    return this.band.y + this.band.rows - y;
  }

  rows(y: number): Uint8Array {
    const band = this.band!;
    return band.data.subarray((y - band.y) * this.source.width * 4);
  }
}
