import { AVERAGE, NONE, PAETH, SUB, UP } from './unfilter';

/**
 * How the encoder picks each row's filter (PNG spec, 9.2; measured in bench/png-codec.ts):
 * - 'adaptive': libpng's heuristic, the filter whose output has the smallest sum of absolute
 *   values (bytes read as signed), over all five filters;
 * - 'cheap-adaptive': the same heuristic over None, Sub and Up only, the filters that cost one
 *   subtraction a byte (Average and Paeth make the heuristic twice as slow);
 * - 'none': no filtering (what sharp's default `png()` does: libvips' filter NONE);
 * - 'paeth', 'up': one filter for every row.
 */
export type FilterStrategy = 'adaptive' | 'cheap-adaptive' | 'none' | 'paeth' | 'up';

const abs = (v: number) => (v < 128 ? v : 256 - v);

function paethPredictor(a: number, b: number, c: number): number {
  const pa = b > c ? b - c : c - b;
  const pb = a > c ? a - c : c - a;
  const pc = a + b - c - c < 0 ? c + c - a - b : a + b - c - c;
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** The filter the strategy picks for row `cur` (unfiltered bytes) after `prior` (zeros for the first row). */
export function chooseFilter(strategy: FilterStrategy, cur: Uint8Array, prior: Uint8Array, bpp: number): number {
  if (strategy === 'none') return NONE;
  if (strategy === 'paeth') return PAETH;
  if (strategy === 'up') return UP;
  if (strategy === 'cheap-adaptive') return cheapAdaptive(cur, prior, bpp);
  const n = cur.length;
  let none = 0;
  let sub = 0;
  let up = 0;
  let average = 0;
  let paeth = 0;
  const first = Math.min(n, bpp);
  for (let i = 0; i < first; i++) {
    const x = cur[i];
    const b = prior[i];
    none += abs(x);
    sub += abs(x);
    up += abs((x - b) & 255);
    average += abs((x - (b >> 1)) & 255);
    paeth += abs((x - b) & 255);
  }
  for (let i = first; i < n; i++) {
    const x = cur[i];
    const a = cur[i - bpp];
    const b = prior[i];
    const c = prior[i - bpp];
    none += abs(x);
    sub += abs((x - a) & 255);
    up += abs((x - b) & 255);
    average += abs((x - ((a + b) >> 1)) & 255);
    paeth += abs((x - paethPredictor(a, b, c)) & 255);
  }
  // Ties go to the earlier filter, as in libpng.
  let best = NONE;
  let bestSum = none;
  if (sub < bestSum) [best, bestSum] = [SUB, sub];
  if (up < bestSum) [best, bestSum] = [UP, up];
  if (average < bestSum) [best, bestSum] = [AVERAGE, average];
  if (paeth < bestSum) best = PAETH;
  return best;
}

function cheapAdaptive(cur: Uint8Array, prior: Uint8Array, bpp: number): number {
  const n = cur.length;
  let none = 0;
  let sub = 0;
  let up = 0;
  for (let i = 0; i < n; i++) {
    const x = cur[i];
    none += abs(x);
    sub += abs((x - (i >= bpp ? cur[i - bpp] : 0)) & 255);
    up += abs((x - prior[i]) & 255);
  }
  if (sub < none && sub < up) return SUB;
  return up < none ? UP : NONE;
}

/** Writes the filter byte and row `cur` filtered with `filter` to out[at..at + 1 + cur.length). */
export function filterRow(filter: number, cur: Uint8Array, prior: Uint8Array, bpp: number, out: Uint8Array, at: number): void {
  const n = cur.length;
  const first = Math.min(n, bpp);
  out[at] = filter;
  const o = at + 1;
  switch (filter) {
    case NONE:
      out.set(cur, o);
      return;
    case SUB:
      for (let i = 0; i < first; i++) out[o + i] = cur[i];
      for (let i = first; i < n; i++) out[o + i] = cur[i] - cur[i - bpp];
      return;
    case UP:
      for (let i = 0; i < n; i++) out[o + i] = cur[i] - prior[i];
      return;
    case AVERAGE:
      for (let i = 0; i < first; i++) out[o + i] = cur[i] - (prior[i] >> 1);
      for (let i = first; i < n; i++) out[o + i] = cur[i] - ((cur[i - bpp] + prior[i]) >> 1);
      return;
    case PAETH:
      for (let i = 0; i < first; i++) out[o + i] = cur[i] - prior[i];
      for (let i = first; i < n; i++) out[o + i] = cur[i] - paethPredictor(cur[i - bpp], prior[i], prior[i - bpp]);
      return;
  }
}
