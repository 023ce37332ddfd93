import type { RowSource } from './rows';

/**
 * Kernels that hold a window of rows (blur's and sharpen's, filter-kernels.ts): rows go in one at a
 * time while they want input, and each output row is made into a band they hand out.
 */
export interface RowWindow {
  wantsInput(): boolean;
  /** One input row of RGBA bytes. */
  push(row: Uint8Array): void;
  /** Output row `y` of the picture, into row `bandRow` of the band. */
  emit(y: number, bandRow: number): void;
  /** The band's first `rows` rows. */
  band(rows: number): Uint8Array;
}

/**
 * `source` through `window` in bands of `bandRows`, the same size and traits; `heldBytes` is what
 * the window holds (its kernels' memory), `stage` names it in errors.
 */
export function windowedRows(source: RowSource, stage: string, window: RowWindow, bandRows: number, heldBytes: number): RowSource {
  const { width, height } = source;
  const rowBytes = width * 4;
  let band: { data: Uint8Array; row: number; rows: number } | null = null;
  let y = 0;
  const pushRow = async () => {
    if (!band || band.row >= band.rows) {
      const next = await source.read();
      if (!next) throw new Error(`${stage}: the source ended before its ${height} rows`);
      band = { data: next.data, row: 0, rows: next.rows };
    }
    window.push(band.data.subarray(band.row * rowBytes, ++band.row * rowBytes));
  };
  return {
    width,
    height,
    model: source.model,
    alpha: source.alpha,
    grey: source.grey,
    async read() {
      if (y >= height) {
        source.close();
        return null;
      }
      const rows = Math.min(bandRows, height - y);
      for (let row = 0; row < rows; row++) {
        while (window.wantsInput()) await pushRow();
        window.emit(y + row, row);
      }
      const result = { y, rows, data: window.band(rows) };
      y += rows;
      return result;
    },
    heldBytes: () => source.heldBytes() + heldBytes,
    close: () => source.close(),
  };
}
