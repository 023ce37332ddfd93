import { blurRadius, RowBlur } from './recursive-gaussian';
import { srgbDecode } from '../stages/colour/srgb';
import { linearFromSrgb8 } from './srgb-linear';

/*
 * SSIMULACRA 2.1 (Jon Sneyers, Cloudinary; libjxl tools/ssimulacra2.cc), computed a band of rows at
 * a time. The definition is the reference's: both pictures blended onto grey 0.5 where they have
 * alpha, to linear sRGB, then at six scales (each the previous one averaged 2x2 in linear light):
 * libjxl's XYB made positive, a recursive Gaussian (sigma 1.5, zero-padded) of each plane and of
 * their products, and per channel the 1- and 4-norms of SSIM' (no luminance denominator), of
 * "ringing" (edges the original lacks) and of "blurring" (edges the distorted picture lost): 108
 * numbers, weighted and mapped to a score of at most 100 (identical pictures).
 *
 * The reference blurs whole planes; here the vertical pass runs down the rows (blurVertical), so a
 * scale holds a few rows per plane whatever the height: ssimulacra2Bytes(width). Rows of the two
 * pictures are pushed in step, top to bottom (push), and score() reads the result after the last.
 */

const SCALES = 6;
const C2 = Math.fround(0.0009);
/** Single precision where the reference computes in it: near-identical pictures score its rounding too. */
const f32 = Math.fround;

/** XYB planes (reference and distorted), their products and the blurred planes of one scale. */
const PLANES = 15;

/** The row of each picture in linear light, per column: 2 pictures x 3 planes x 4 bytes. */
const LINEAR_ROWS_BYTES = 24;

/** Linear-light pixels of one row: R, G and B planes. */
interface LinearRow {
  r: Float32Array;
  g: Float32Array;
  b: Float32Array;
}

/**
 * Bytes a streaming score of pictures `width` wide holds (every scale's rows and states), for the
 * memory plan: about 2.5 KB a column (10 MB for a 4000 px wide picture).
 */
export function ssimulacra2Bytes(width: number): number {
  let total = LINEAR_ROWS_BYTES * width;
  for (let scale = 0, w = width; scale < SCALES; scale++, w = Math.ceil(w / 2)) total += Scale.bytesFor(w);
  return total;
}

/**
 * How many scales the reference computes for a picture of this size: the first where it is at
 * least 8x8, and each next one where the one before it is (so the last may be smaller).
 */
export function scaleCount(width: number, height: number): number {
  let large = 0;
  for (let w = width, h = height; large < SCALES && w >= 8 && h >= 8; w = Math.ceil(w / 2), h = Math.ceil(h / 2)) large++;
  return large === 0 ? 0 : Math.min(SCALES, large + 1);
}

/** The score of two pictures of the same size, fed in bands of rows. */
export class Ssimulacra2 {
  private readonly scales: Scale[] = [];
  private readonly row: LinearRow[];
  private y = 0;

  constructor(
    readonly width: number,
    readonly height: number,
  ) {
    if (!(width >= 1 && height >= 1)) throw new Error(`ssimulacra2: no picture (${width}x${height})`);
    const count = scaleCount(width, height);
    for (let s = 0, w = width, h = height; s < count; s++, w = Math.ceil(w / 2), h = Math.ceil(h / 2)) {
      this.scales.push(new Scale(w, h, s + 1 < count));
    }
    for (let s = 0; s + 1 < this.scales.length; s++) this.scales[s].next = this.scales[s + 1];
    this.row = [linearRow(width), linearRow(width)];
  }

  /** Bytes this score holds (ssimulacra2Bytes of its width, for the pictures it was made for). */
  heldBytes(): number {
    return this.scales.reduce((sum, scale) => sum + scale.heldBytes, 0) + LINEAR_ROWS_BYTES * this.width;
  }

  /**
   * The next `rows` rows of both pictures, RGBA 8-bit, `width` pixels a row without padding (the
   * original first: the metric is not symmetric).
   */
  push(original: Uint8Array, distorted: Uint8Array, rows: number): void {
    if (this.y + rows > this.height) throw new Error(`ssimulacra2: ${this.y + rows} rows pushed, the picture has ${this.height}`);
    const stride = this.width * 4;
    if (original.length < rows * stride || distorted.length < rows * stride) throw new Error('ssimulacra2: a band is shorter than its rows');
    const [a, b] = this.row;
    for (let r = 0; r < rows; r++, this.y++) {
      toLinear(original, r * stride, this.width, a);
      toLinear(distorted, r * stride, this.width, b);
      this.scales[0]?.push(a, b);
    }
  }

  /** The score, once every row was pushed: 100 for identical pictures, lower as they differ (it can go below 0). */
  score(): number {
    if (this.y !== this.height) throw new Error(`ssimulacra2: ${this.y} of ${this.height} rows were pushed`);
    for (const scale of this.scales) scale.finish();
    return combine(this.scales.map((scale) => scale.norms()));
  }
}

function linearRow(width: number): LinearRow {
  return { r: new Float32Array(width), g: new Float32Array(width), b: new Float32Array(width) };
}

/** RGBA 8-bit to linear sRGB, blended onto grey 0.5 (in the encoded values, as the reference does) where not opaque. */
function toLinear(rgba: Uint8Array, offset: number, width: number, out: LinearRow): void {
  const { r, g, b } = out;
  for (let x = 0, i = offset; x < width; x++, i += 4) {
    const alpha = rgba[i + 3];
    if (alpha === 255) {
      r[x] = linearFromSrgb8[rgba[i]];
      g[x] = linearFromSrgb8[rgba[i + 1]];
      b[x] = linearFromSrgb8[rgba[i + 2]];
    } else {
      const a = alpha / 255;
      const grey = (1 - a) * 0.5;
      r[x] = srgbDecode((a * rgba[i]) / 255 + grey);
      g[x] = srgbDecode((a * rgba[i + 1]) / 255 + grey);
      b[x] = srgbDecode((a * rgba[i + 2]) / 255 + grey);
    }
  }
}

// libjxl's opsin absorbance matrix and bias (lib/jxl/opsin_params.h), at the default 255 nits.
const M00 = 0.3;
const M02 = 0.078;
const M01 = 1 - M02 - M00;
const M10 = 0.23;
const M12 = 0.078;
const M11 = 1 - M12 - M10;
const M20 = 0.24342268924547819;
const M21 = 0.20476744424496821;
const M22 = 1 - M20 - M21;
const BIAS = 0.0037930732552754493;
const NEG_BIAS_CBRT = -Math.cbrt(BIAS);

/** Linear sRGB to XYB, made positive as ssimulacra2's MakePositiveXYB does (each about 0..1). */
function toXyb(input: LinearRow, x: Float32Array, y: Float32Array, b: Float32Array, width: number): void {
  const { r: ir, g: ig, b: ib } = input;
  for (let i = 0; i < width; i++) {
    const r = ir[i];
    const g = ig[i];
    const bl = ib[i];
    const m0 = Math.cbrt(Math.max(0, M00 * r + M01 * g + M02 * bl + BIAS)) + NEG_BIAS_CBRT;
    const m1 = Math.cbrt(Math.max(0, M10 * r + M11 * g + M12 * bl + BIAS)) + NEG_BIAS_CBRT;
    const m2 = Math.cbrt(Math.max(0, M20 * r + M21 * g + M22 * bl + BIAS)) + NEG_BIAS_CBRT;
    const yy = 0.5 * (m0 + m1);
    x[i] = 0.5 * (m0 - m1) * 14 + 0.42;
    y[i] = yy + 0.01;
    b[i] = m2 - yy + 0.55;
  }
}

/**
 * One scale: rows arrive as linear light, become XYB and products, are blurred across and down,
 * and each blurred row adds to the six norms of its three channels. It also averages pairs of rows
 * (and of columns) into the next scale's rows.
 */
class Scale {
  next: Scale | null = null;
  private readonly blur: RowBlur;
  /** Row `y` of the 15 planes: X, Y, B of each picture, then the three products of each channel. */
  private readonly planes: Float32Array[];
  /** The XYB rows of both pictures, kept until their blurred row comes out (blurRadius rows later). */
  private readonly xybRing: Float32Array[][];
  private readonly sums = new Float64Array(3 * 6);
  private readonly pending: LinearRow[] | null;
  private readonly half: LinearRow[] | null;
  private received = 0;
  private emitted = 0;
  private finished = false;

  static bytesFor(width: number): number {
    return RowBlur.bytesFor(width, PLANES) + (PLANES + 6 * (blurRadius() + 1) + 2 * 3 * 2) * width * 4;
  }

  constructor(
    private readonly width: number,
    private readonly height: number,
    feedsNext: boolean,
  ) {
    this.blur = new RowBlur(width, height, PLANES);
    this.planes = Array.from({ length: PLANES }, () => new Float32Array(width));
    this.xybRing = Array.from({ length: blurRadius() + 1 }, () => Array.from({ length: 6 }, () => new Float32Array(width)));
    this.pending = feedsNext ? [linearRow(width), linearRow(width)] : null;
    const halfWidth = Math.ceil(width / 2);
    this.half = feedsNext ? [linearRow(halfWidth), linearRow(halfWidth)] : null;
  }

  get heldBytes(): number {
    return Scale.bytesFor(this.width);
  }

  push(original: LinearRow, distorted: LinearRow): void {
    const y = this.received++;
    const xyb = this.xybRing[y % this.xybRing.length];
    toXyb(original, xyb[0], xyb[1], xyb[2], this.width);
    toXyb(distorted, xyb[3], xyb[4], xyb[5], this.width);
    const p = this.planes;
    for (let c = 0; c < 3; c++) {
      p[c].set(xyb[c]);
      p[3 + c].set(xyb[3 + c]);
      multiply(xyb[c], xyb[c], p[6 + c]);
      multiply(xyb[3 + c], xyb[3 + c], p[9 + c]);
      multiply(xyb[c], xyb[3 + c], p[12 + c]);
    }
    this.blur.push(p, (row, blurred) => this.accumulate(row, blurred));
    if (this.pending) this.downsample(y, original, distorted);
  }

  /** Flushes the rows the blur still holds and the next scale's last row. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.received !== this.height) throw new Error(`ssimulacra2: a scale got ${this.received} of ${this.height} rows`);
    this.blur.finish((row, blurred) => this.accumulate(row, blurred));
    if (this.emitted !== this.height) throw new Error(`ssimulacra2: a scale scored ${this.emitted} of ${this.height} rows`);
  }

  /** The 18 norms: per channel SSIM' 1 and 4, ringing 1 and 4, blurring 1 and 4. */
  norms(): number[] {
    return normsOf(this.sums, this.width * this.height);
  }

  /** SSIM' and the edge maps of blurred row `row` (the 15 blurred planes in the order of `planes`). */
  private accumulate(row: number, blurred: Float32Array[]): void {
    this.emitted++;
    const xyb = this.xybRing[row % this.xybRing.length];
    const width = this.width;
    for (let c = 0; c < 3; c++) {
      const mu1 = blurred[c];
      const mu2 = blurred[3 + c];
      const s11 = blurred[6 + c];
      const s22 = blurred[9 + c];
      const s12 = blurred[12 + c];
      const img1 = xyb[c];
      const img2 = xyb[3 + c];
      let ssim1 = 0;
      let ssim4 = 0;
      let ring1 = 0;
      let ring4 = 0;
      let blur1 = 0;
      let blur4 = 0;
      for (let x = 0; x < width; x++) {
        const m1 = mu1[x];
        const m2 = mu2[x];
        const m11 = f32(m1 * m1);
        const m22 = f32(m2 * m2);
        const m12 = f32(m1 * m2);
        const numM = f32(1 - f32((m1 - m2) * (m1 - m2)));
        const numS = f32(2 * f32(s12[x] - m12) + C2);
        const denS = f32(f32(f32(s11[x] - m11) + f32(s22[x] - m22)) + C2);
        let d = 1 - f32(f32(numM * numS) / denS);
        if (d < 0) d = 0;
        ssim1 += d;
        d *= d;
        ssim4 += d * d;
        const edge = (1 + Math.abs(img2[x] - m2)) / (1 + Math.abs(img1[x] - m1)) - 1;
        if (edge > 0) {
          ring1 += edge;
          const e2 = edge * edge;
          ring4 += e2 * e2;
        } else {
          blur1 -= edge;
          const e2 = edge * edge;
          blur4 += e2 * e2;
        }
      }
      const s = this.sums;
      s[c * 6] += ssim1;
      s[c * 6 + 1] += ssim4;
      s[c * 6 + 2] += ring1;
      s[c * 6 + 3] += ring4;
      s[c * 6 + 4] += blur1;
      s[c * 6 + 5] += blur4;
    }
  }

  /** Rows 2k and 2k + 1 (the last row twice where the height is odd) averaged 2x2 into the next scale's row k. */
  private downsample(y: number, original: LinearRow, distorted: LinearRow): void {
    const pending = this.pending!;
    const last = y === this.height - 1;
    if (y % 2 === 0 && !last) {
      copyRow(original, pending[0]);
      copyRow(distorted, pending[1]);
      return;
    }
    const first = y % 2 === 0 ? [original, distorted] : pending;
    const half = this.half!;
    average(first[0], original, half[0], this.width);
    average(first[1], distorted, half[1], this.width);
    this.next!.push(half[0], half[1]);
  }
}

/**
 * A scale's 18 norms from its sums over `pixels` (per channel: SSIM' and its 4th power, ringing and
 * its 4th power, blurring and its 4th power): means, and 4th roots of the 4th powers' means.
 */
export function normsOf(sums: ArrayLike<number>, pixels: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < 18; i++) out.push(i % 2 === 0 ? sums[i] / pixels : Math.sqrt(Math.sqrt(sums[i] / pixels)));
  return out;
}

function multiply(a: Float32Array, b: Float32Array, out: Float32Array): void {
  for (let i = 0; i < out.length; i++) out[i] = a[i] * b[i];
}

function copyRow(from: LinearRow, to: LinearRow): void {
  to.r.set(from.r);
  to.g.set(from.g);
  to.b.set(from.b);
}

/** libjxl's Downsample(2, 2): columns past the edge repeat the last one. */
function average(top: LinearRow, bottom: LinearRow, out: LinearRow, width: number): void {
  const outWidth = Math.ceil(width / 2);
  for (const channel of ['r', 'g', 'b'] as const) {
    const t = top[channel];
    const b = bottom[channel];
    const o = out[channel];
    for (let x = 0; x < outWidth; x++) {
      const x0 = 2 * x;
      const x1 = Math.min(x0 + 1, width - 1);
      o[x] = (t[x0] + t[x1] + b[x0] + b[x1]) * 0.25;
    }
  }
}

/** ssimulacra2.cc's weights of the 108 norms, in its order: channel, scale, norm, then SSIM', ringing, blurring. */
const WEIGHTS = [
  0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0, 0.0, 0.0004371155730107379, 0.0, 1.1041726426657346,
  0.00066284834129271, 0.00015231632783718752, 0.0, 0.0016406437456599754, 0.0, 1.8422455520539298, 11.441172603757666, 0.0,
  0.0007989109436015163, 0.000176816438078653, 0.0, 1.8787594979546387, 10.94906990605142, 0.0, 0.0007289346991508072,
  0.9677937080626833, 0.0, 0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053, 0.0004550992113792063, 0.0, 0.0,
  0.0013648766163243398, 0.0, 0.0, 0.0, 0.0, 0.0, 7.466890328078848, 0.0, 17.445833984131262, 0.0006235601634041466, 0.0, 0.0,
  6.683678146179332, 0.00037724407979611296, 1.027889937768264, 225.20515300849274, 0.0, 0.0, 19.213238186143016,
  0.0011401524586618361, 0.001237755635509985, 176.39317598450694, 0.0, 0.0, 24.43300999870476, 0.28520802612117757,
  0.0004485436923833408, 0.0, 0.0, 0.0, 34.77906344483772, 44.835625328877896, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
  0.0008680556573291698, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0005313191874358747, 0.0, 0.00016533814161379112, 0.0, 0.0, 0.0, 0.0, 0.0,
  0.0004179171803251336, 0.0017290828234722833, 0.0, 0.0020827005846636437, 0.0, 0.0, 8.826982764996862, 23.19243343998926, 0.0,
  95.1080498811086, 0.9863978034400682, 0.9834382792465353, 0.0012286405048278493, 171.2667255897307, 0.9807858872435379, 0.0,
  0.0, 0.0, 0.0005130064588990679, 0.0, 0.00010854057858411537,
];

/**
 * The weighted sum and its mapping to the score, as Msssim::Score: with fewer than six scales (a
 * small picture) the weights are taken in order all the same, as the reference takes them.
 */
export function combine(scales: number[][]): number {
  let sum = 0;
  let i = 0;
  for (let c = 0; c < 3; c++) {
    for (const norms of scales) {
      for (let n = 0; n < 2; n++) {
        sum += WEIGHTS[i++] * Math.abs(norms[c * 6 + n]);
        sum += WEIGHTS[i++] * Math.abs(norms[c * 6 + 2 + n]);
        sum += WEIGHTS[i++] * Math.abs(norms[c * 6 + 4 + n]);
      }
    }
  }
  sum *= 0.9562382616834844;
  sum = 2.326765642916932 * sum - 0.020884521182843837 * sum * sum + 6.248496625763138e-5 * sum * sum * sum;
  return sum > 0 ? 100 - 10 * Math.pow(sum, 0.6276336467831387) : 100;
}
