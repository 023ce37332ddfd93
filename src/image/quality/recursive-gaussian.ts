/*
 * libjxl's recursive Gaussian (lib/jxl/gauss_blur.cc, after Charalampidis 2016, "Recursive
 * Implementation of the Gaussian Filter Using Truncated Cosine Functions"): three second-order
 * filters whose outputs add up to a Gaussian of sigma 1.5, zero outside the picture. Across a row it
 * runs as libjxl runs it; down the columns it runs one row at a time, as rows arrive, which the
 * reference's own vertical pass allows (each output row needs the input up to radius - 1 rows below).
 */

const SIGMA = 1.5;

interface Coefficients {
  radius: number;
  /** Per filter k = 1, 3, 5: the input's weight and the previous output's (the one before weighs -1). */
  n2: Float64Array;
  d1: Float64Array;
}

/** CreateRecursiveGaussian(sigma), with the weights rounded to single precision as libjxl stores them. */
function recursiveGaussian(sigma: number): Coefficients {
  const radius = Math.round(3.2795 * sigma + 0.2546);
  const piDiv2r = Math.PI / (2 * radius);
  const omega = [piDiv2r, 3 * piDiv2r, 5 * piDiv2r];
  const p1 = 1 / Math.tan(0.5 * omega[0]);
  const p3 = -1 / Math.tan(0.5 * omega[1]);
  const p5 = 1 / Math.tan(0.5 * omega[2]);
  const r1 = (p1 * p1) / Math.sin(omega[0]);
  const r3 = (-p3 * p3) / Math.sin(omega[1]);
  const r5 = (p5 * p5) / Math.sin(omega[2]);
  const rho = omega.map((w) => Math.exp(-0.5 * sigma * sigma * w * w) / radius);
  const d13 = p1 * r3 - r1 * p3;
  const d35 = p3 * r5 - r3 * p5;
  const d51 = p5 * r1 - r5 * p1;
  const zeta15 = d35 / d13;
  const zeta35 = d51 / d13;
  const a = inverse3x3([p1, p3, p5, r1, r3, r5, zeta15, zeta35, 1]);
  const gamma = [1, radius * radius - sigma * sigma, zeta15 * rho[0] + zeta35 * rho[1] + rho[2]];
  const beta = [0, 1, 2].map((row) => a[row * 3] * gamma[0] + a[row * 3 + 1] * gamma[1] + a[row * 3 + 2] * gamma[2]);
  const n2 = new Float64Array(3);
  const d1 = new Float64Array(3);
  for (let i = 0; i < 3; i++) {
    n2[i] = Math.fround(-beta[i] * Math.cos(omega[i] * (radius + 1)));
    d1[i] = Math.fround(-2 * Math.cos(omega[i]));
  }
  return { radius, n2, d1 };
}

function inverse3x3(m: number[]): number[] {
  const [a, b, c, d, e, f, g, h, i] = m;
  const A = e * i - f * h;
  const B = -(d * i - f * g);
  const C = d * h - e * g;
  const det = a * A + b * B + c * C;
  return [A, -(b * i - c * h), b * f - c * e, B, a * i - c * g, -(a * f - c * d), C, -(a * h - b * g), a * e - b * d].map((v) => v / det);
}

const GAUSS = recursiveGaussian(SIGMA);

/** Single precision, as libjxl filters: its rounding is part of what the reference scores. */
const f32 = Math.fround;

/** The three filters' input weights (n2) and previous-output weights (d1), in single precision. */
export function blurWeights(): { n2: Float64Array; d1: Float64Array } {
  return { n2: GAUSS.n2, d1: GAUSS.d1 };
}

/** Rows an output row waits for below it, less one: libjxl's N (5 for sigma 1.5). */
export function blurRadius(): number {
  return GAUSS.radius;
}

/** FastGaussian1D: one row blurred, zero outside it. */
export function blurRow(input: Float32Array, out: Float32Array, width: number): void {
  const { radius: N, n2, d1 } = GAUSS;
  const [n21, n23, n25] = n2;
  const [d11, d13, d15] = d1;
  let p1a = 0, p2a = 0, p1b = 0, p2b = 0, p1c = 0, p2c = 0;
  for (let n = -N + 1; n < width; n++) {
    const left = n - N - 1;
    const right = n + N - 1;
    const sum = f32((left >= 0 ? input[left] : 0) + (right < width ? input[right] : 0));
    const a = f32(n21 * sum - d11 * p1a - p2a);
    const b = f32(n23 * sum - d13 * p1b - p2b);
    const c = f32(n25 * sum - d15 * p1c - p2c);
    p2a = p1a;
    p1a = a;
    p2b = p1b;
    p1b = b;
    p2c = p1c;
    p1c = c;
    if (n >= 0) out[n] = a + b + c;
  }
}

/**
 * A Gaussian of several planes of the same size, fed a row of each at a time. Down the columns the
 * filters are linear and start at rest, so the reference's sum of the rows N - 1 below and N + 1
 * above is the filtered rows below plus the same 2N rows earlier: each plane keeps the filters'
 * last two outputs per column and a ring of 2N + 1 filtered rows.
 */
export class RowBlur {
  private readonly across: Float32Array;
  /** Per plane: the three filters' last and second-last outputs, per column. */
  private readonly state: Float32Array[];
  /** Per plane: a ring of 2N + 1 filtered rows (their three filters added). */
  private readonly ring: Float32Array[];
  private readonly out: Float32Array[];
  private readonly zero: Float32Array;
  private received = 0;

  static bytesFor(width: number, planes: number): number {
    return (planes * (6 + 2 * GAUSS.radius + 1 + 1) + 2) * width * 4;
  }

  constructor(
    private readonly width: number,
    private readonly height: number,
    private readonly planes: number,
  ) {
    const ringRows = 2 * GAUSS.radius + 1;
    this.across = new Float32Array(width);
    this.zero = new Float32Array(width);
    this.state = Array.from({ length: planes }, () => new Float32Array(6 * width));
    this.ring = Array.from({ length: planes }, () => new Float32Array(ringRows * width));
    this.out = Array.from({ length: planes }, () => new Float32Array(width));
  }

  /** The next row of every plane; `emit` gets each blurred row as soon as it is complete (radius - 1 rows later). */
  push(rows: Float32Array[], emit: (row: number, blurred: Float32Array[]) => void): void {
    if (this.received >= this.height) throw new Error('blur: more rows than the picture has');
    for (let p = 0; p < this.planes; p++) {
      blurRow(rows[p], this.across, this.width);
      this.filterDown(p, this.across, this.received);
    }
    this.emitRow(this.received++, emit);
  }

  /** The last rows, whose filters still needed the zeros below the picture. */
  finish(emit: (row: number, blurred: Float32Array[]) => void): void {
    if (this.received !== this.height) throw new Error(`blur: ${this.received} of ${this.height} rows arrived`);
    for (let y = this.height; y < this.height + GAUSS.radius - 1; y++) {
      for (let p = 0; p < this.planes; p++) this.filterDown(p, this.zero, y);
      this.emitRow(y, emit);
    }
  }

  /** Filter step m = y - N + 1 (input row y, zeros past the picture) of plane p, stored in its ring. */
  private filterDown(p: number, input: Float32Array, y: number): void {
    const { n2, d1, radius: N } = GAUSS;
    const width = this.width;
    const state = this.state[p];
    const m = y - N + 1;
    const slot = slotOf(m, N) * width;
    const ring = this.ring[p];
    const [n21, n23, n25] = n2;
    const [d11, d13, d15] = d1;
    const s1 = width;
    const s2 = 2 * width;
    const s3 = 3 * width;
    const s4 = 4 * width;
    const s5 = 5 * width;
    for (let x = 0; x < width; x++) {
      const v = input[x];
      const a = f32(f32(n21 * v) - f32(f32(d11 * state[x]) + state[s1 + x]));
      const b = f32(f32(n23 * v) - f32(f32(d13 * state[s2 + x]) + state[s3 + x]));
      const c = f32(f32(n25 * v) - f32(f32(d15 * state[s4 + x]) + state[s5 + x]));
      state[s1 + x] = state[x];
      state[x] = a;
      state[s3 + x] = state[s2 + x];
      state[s2 + x] = b;
      state[s5 + x] = state[s4 + x];
      state[s4 + x] = c;
      ring[slot + x] = f32(a + f32(b + c));
    }
  }

  /** Output row m = y - N + 1 once input row y went in: the filtered row m plus the one 2N rows before it. */
  private emitRow(y: number, emit: (row: number, blurred: Float32Array[]) => void): void {
    const N = GAUSS.radius;
    const m = y - N + 1;
    if (m < 0) return;
    const width = this.width;
    const earlier = m - 2 * N;
    for (let p = 0; p < this.planes; p++) {
      const ring = this.ring[p];
      const out = this.out[p];
      const at = slotOf(m, N) * width;
      if (earlier < -N + 1) out.set(ring.subarray(at, at + width));
      else {
        const before = slotOf(earlier, N) * width;
        for (let x = 0; x < width; x++) out[x] = ring[at + x] + ring[before + x];
      }
    }
    emit(m, this.out);
  }
}

/** Ring slot of filter step m (which starts at -N + 1). */
function slotOf(m: number, N: number): number {
  return (m + N - 1) % (2 * N + 1);
}
