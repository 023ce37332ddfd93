import { damaged } from '../../bytes';

/**
 * A colour lookup table: a grid over the inputs (0..1 each) holding `outputs` values per node.
 * Interpolation follows lcms: tetrahedral for three inputs, linear in the first input between two
 * tetrahedral interpolations for four, multilinear otherwise.
 */
export interface Clut {
  /** Grid points per input, first input first (it varies slowest in `values`). */
  points: readonly number[];
  outputs: number;
  /** Node values, 0..65535 (8-bit tables are scaled by 257). */
  values: Uint16Array;
}

/** 2^22 values (8 MB) covers a 33-point CMYK grid; a larger table is a hostile profile. */
export const MAX_CLUT_VALUES = 1 << 22;

/** Checks a grid's size before anything is allocated; throws `damaged` for a refused grid. */
export function clutValueCount(points: readonly number[], outputs: number): number {
  let count = outputs;
  for (const n of points) {
    if (n < 2) throw damaged(`icc: CLUT with ${n} grid points`);
    count *= n;
    if (count > MAX_CLUT_VALUES) throw damaged('icc: CLUT too large');
  }
  return count;
}

/** An interpolator of the table: `input` (clipped to 0..1) -> `out` (0..1 each). Reuses its scratch space. */
export function clutEvaluator(clut: Clut): (input: ArrayLike<number>, out: Float64Array) => void {
  const { points, outputs, values } = clut;
  const dims = points.length;
  const strides = new Array<number>(dims);
  for (let d = dims - 1, stride = outputs; d >= 0; stride *= points[d], d--) strides[d] = stride;
  const step = new Array<number>(dims).fill(0);
  const fraction = new Array<number>(dims).fill(0);
  return (input, out) => {
    let origin = 0;
    for (let d = 0; d < dims; d++) {
      const position = Math.min(Math.max(input[d], 0), 1) * (points[d] - 1);
      const index = Math.min(Math.floor(position), points[d] - 2);
      origin += index * strides[d];
      fraction[d] = position - index;
      step[d] = fraction[d] > 0 ? strides[d] : 0;
    }
    if (dims === 3) {
      tetrahedral(values, origin, step[0], step[1], step[2], fraction[0], fraction[1], fraction[2], outputs, out, 1, false);
    } else if (dims === 4) {
      tetrahedral(values, origin, step[1], step[2], step[3], fraction[1], fraction[2], fraction[3], outputs, out, 1 - fraction[0], false);
      tetrahedral(values, origin + step[0], step[1], step[2], step[3], fraction[1], fraction[2], fraction[3], outputs, out, fraction[0], true);
    } else {
      multilinear(values, origin, step, fraction, outputs, out);
    }
    for (let o = 0; o < outputs; o++) out[o] /= 65535;
  };
}

/**
 * Tetrahedral interpolation in the cube at `origin` with neighbours `sx`, `sy`, `sz` away (0 on the
 * last grid plane), weighted by `weight` and written to `out` (or added to it).
 */
function tetrahedral(
  values: Uint16Array, origin: number, sx: number, sy: number, sz: number,
  rx: number, ry: number, rz: number, outputs: number, out: Float64Array, weight: number, add: boolean,
): void {
  for (let o = 0; o < outputs; o++) {
    const at = origin + o;
    const c0 = values[at];
    let c1: number, c2: number, c3: number;
    if (rx >= ry && ry >= rz) {
      c1 = values[at + sx] - c0; c2 = values[at + sx + sy] - values[at + sx]; c3 = values[at + sx + sy + sz] - values[at + sx + sy];
    } else if (rx >= rz && rz >= ry) {
      c1 = values[at + sx] - c0; c2 = values[at + sx + sy + sz] - values[at + sx + sz]; c3 = values[at + sx + sz] - values[at + sx];
    } else if (rz >= rx && rx >= ry) {
      c1 = values[at + sx + sz] - values[at + sz]; c2 = values[at + sx + sy + sz] - values[at + sx + sz]; c3 = values[at + sz] - c0;
    } else if (ry >= rx && rx >= rz) {
      c1 = values[at + sx + sy] - values[at + sy]; c2 = values[at + sy] - c0; c3 = values[at + sx + sy + sz] - values[at + sx + sy];
    } else if (ry >= rz && rz >= rx) {
      c1 = values[at + sx + sy + sz] - values[at + sy + sz]; c2 = values[at + sy] - c0; c3 = values[at + sy + sz] - values[at + sy];
    } else {
      c1 = values[at + sx + sy + sz] - values[at + sy + sz]; c2 = values[at + sy + sz] - values[at + sz]; c3 = values[at + sz] - c0;
    }
    const value = weight * (c0 + c1 * rx + c2 * ry + c3 * rz);
    out[o] = add ? out[o] + value : value;
  }
}

function multilinear(values: Uint16Array, origin: number, step: number[], fraction: number[], outputs: number, out: Float64Array): void {
  out.fill(0, 0, outputs);
  for (let corner = 0; corner < 1 << step.length; corner++) {
    let at = origin;
    let weight = 1;
    for (let d = 0; d < step.length; d++) {
      const upper = (corner >> d) & 1;
      at += upper * step[d];
      weight *= upper ? fraction[d] : 1 - fraction[d];
    }
    if (weight > 0) for (let o = 0; o < outputs; o++) out[o] += weight * values[at + o];
  }
}
