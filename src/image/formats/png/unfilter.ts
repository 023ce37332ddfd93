import { damaged } from '../../bytes';

/** Filter types (PNG spec, 9.2). */
export const NONE = 0;
export const SUB = 1;
export const UP = 2;
export const AVERAGE = 3;
export const PAETH = 4;

/**
 * Reverses the filter of one row in place. `row` and `prior` hold the filter byte at 0 and the
 * row's bytes after it; `prior` is the previous row of the same pass, all zeros for its first row.
 * `bpp` is the bytes of a whole pixel, at least 1 (PNG spec, 9.2).
 */
export function unfilterRow(row: Uint8Array, prior: Uint8Array, bpp: number): void {
  const end = row.length;
  switch (row[0]) {
    case NONE:
      return;
    case SUB:
      for (let i = 1 + bpp; i < end; i++) row[i] += row[i - bpp];
      return;
    case UP:
      for (let i = 1; i < end; i++) row[i] += prior[i];
      return;
    case AVERAGE: {
      const first = Math.min(end, 1 + bpp);
      for (let i = 1; i < first; i++) row[i] += prior[i] >> 1;
      for (let i = first; i < end; i++) row[i] += (row[i - bpp] + prior[i]) >> 1;
      return;
    }
    case PAETH:
      unpaeth(row, prior, bpp);
      return;
    default:
      throw damaged(`png: filter type ${row[0]}`);
  }
}

/**
 * Paeth, one channel at a time so left (a) and upper-left (c) stay in locals: photos are mostly
 * Paeth rows, and this loop is most of an RGB decode's JavaScript time.
 */
function unpaeth(row: Uint8Array, prior: Uint8Array, bpp: number): void {
  const end = row.length;
  for (let channel = 1; channel <= bpp && channel < end; channel++) {
    // First pixel: left and upper-left are 0, so the predictor is the byte above.
    let a = (row[channel] + prior[channel]) & 255;
    row[channel] = a;
    let c = prior[channel];
    for (let i = channel + bpp; i < end; i += bpp) {
      const b = prior[i];
      const pa = b > c ? b - c : c - b; // |p - a| with p = a + b - c
      const pb = a > c ? a - c : c - a; // |p - b|
      const pc = (a + b - c - c) < 0 ? c + c - a - b : a + b - c - c; // |p - c|
      const predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      a = (row[i] + predictor) & 255;
      row[i] = a;
      c = b;
    }
  }
}
