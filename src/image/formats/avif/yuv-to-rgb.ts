import { unsupportedAvif } from './limits';
import { LAYOUT_I400, LAYOUT_I420, LAYOUT_I444, type Samples } from './dav1d';

/*
 * YUV -> 8-bit RGB as libavif does it by default (reformat.c, avifImageYUVAnyToRGBAnySlow with
 * AVIF_CHROMA_UPSAMPLING_AUTOMATIC when libyuv is not used): each code value is normalised as
 * Y = (y - biasY) / rangeY and Cb, Cr = (c - biasUV) / rangeUV (limited range: 16 and 219/224
 * scaled to the bit depth; full range: 0 and 2^depth - 1, chroma centred at 2^(depth-1)), then
 * R = Y + 2(1 - kr) Cr, B = Y + 2(1 - kb) Cb, G = Y - 2(kr(1 - kr) Cr + kb(1 - kb) Cb) / kg, each
 * clamped to [0, 1] and stored as (int)(0.5 + 255 v), whatever the source bit depth. Subsampled
 * chroma is upsampled bilinearly with libavif's 9/16, 3/16, 3/16, 1/16 weights (the nearest sample
 * and its neighbours in the row, the column and the diagonal, duplicated at the image edges);
 * 'nearest' takes the nearest sample only.
 *
 * Speed (a 12 MP 4:2:0 picture in 100-200 ms, by machine load): the chroma of each column is
 * weighted into R, G and B once per row, so a pixel costs a luma table lookup, additions, and a
 * clamp table lookup per channel, written as one 32-bit word; nothing is allocated per pixel.
 */

export type ChromaUpsampling = 'bilinear' | 'nearest';

/** What the conversion of one picture depends on. */
export interface YuvFormat {
  bitDepth: 8 | 10 | 12;
  /** Dav1dPixelLayout: 0 = 4:0:0, 1 = 4:2:0, 2 = 4:2:2, 3 = 4:4:4. */
  layout: number;
  /** ITU-T H.273 matrix_coefficients. */
  matrix: number;
  fullRange: boolean;
}

/**
 * The samples one output row needs, as offsets into plane arrays: luma row j; for chroma the row
 * nearest to j (c0) and the neighbouring row the bilinear filter blends in (c1; equal to c0 without
 * vertical subsampling or at the top and bottom edges). Reused for every row.
 */
export interface RowSamples {
  y: Samples;
  yAt: number;
  u0: Samples;
  u0At: number;
  u1: Samples;
  u1At: number;
  v0: Samples;
  v0At: number;
  v1: Samples;
  v1At: number;
}

/** kr, kb of matrix_coefficients (H.273 table 4) as libavif's table has them; 2 (unspecified) is BT.601. */
const KR_KB: Record<number, [number, number]> = {
  1: [0.2126, 0.0722],
  2: [0.299, 0.114],
  4: [0.3, 0.11],
  5: [0.299, 0.114],
  6: [0.299, 0.114],
  7: [0.212, 0.087],
  9: [0.2627, 0.0593],
};
const IDENTITY = 0;
const YCGCO = 8;

type Mode = 'yuv' | 'identity' | 'ycgco' | 'mono';

/**
 * Values are computed with CLAMP_OFFSET added, so that truncating to an integer is flooring for
 * every value in reach (about -300..560), and clamped to 0..255 by a table lookup.
 */
const CLAMP_OFFSET = 1024;
const CLAMP = Uint32Array.from({ length: 3 * CLAMP_OFFSET }, (_, i) => Math.max(0, Math.min(255, i - CLAMP_OFFSET)));
/** Alpha 255 in a pixel packed as a little-endian 32-bit word (RGBA bytes; Workers and wasm are little-endian). */
const OPAQUE = 0xff000000;

export class YuvToRgb {
  readonly mode: Mode;
  private readonly subsampledX: boolean;
  private readonly subsampledY: boolean;
  /** 255 * Y + 0.5 + CLAMP_OFFSET for every luma code (the 0.5 makes truncation round). */
  private readonly luma: Float64Array;
  /** Cb or Cr * 255 = weightedSum * chromaScale + chromaBias (weightedSum = 16 x a sample, or the sample in 4:4:4). */
  private readonly chromaScale: number;
  private readonly chromaBias: number;
  private readonly rFromCr: number;
  private readonly gFromCb: number;
  private readonly gFromCr: number;
  private readonly bFromCb: number;
  /**
   * Vertically blended chroma (3 c0 + c1, or 4 c0) of the columns a row needs, chroma column k at
   * index k + 1, with index 0 and chromaWidth + 1 repeating the edge columns (libavif's edge rule).
   */
  private blendU = new Int32Array(0);
  private blendV = new Int32Array(0);
  /**
   * For the fast 4:2:0/4:2:2 path, the blended chroma of each column already weighted into each
   * channel (plus a quarter of the channel's constant), indexed like blendU: a pixel's channel is
   * then luma + 3 x its column's term + its neighbour's term, additions only.
   */
  private redTerms = new Float64Array(0);
  private greenTerms = new Float64Array(0);
  private blueTerms = new Float64Array(0);

  constructor(
    readonly format: YuvFormat,
    private readonly upsampling: ChromaUpsampling = 'bilinear',
  ) {
    const { bitDepth, layout, matrix, fullRange } = format;
    const monochrome = layout === LAYOUT_I400;
    this.mode = monochrome ? 'mono' : matrix === IDENTITY ? 'identity' : matrix === YCGCO ? 'ycgco' : 'yuv';
    if (!monochrome) {
      if (matrix === IDENTITY && layout !== LAYOUT_I444) throw unsupportedAvif('the identity (GBR) matrix with subsampled chroma');
      if (matrix === YCGCO && !fullRange) throw unsupportedAvif('YCgCo in limited range');
      if (this.mode === 'yuv' && !(matrix in KR_KB)) throw unsupportedAvif(`matrix_coefficients ${matrix}`);
    }
    this.subsampledX = layout === LAYOUT_I420 || layout === 2;
    this.subsampledY = layout === LAYOUT_I420;
    const max = 2 ** bitDepth - 1;
    const biasY = fullRange ? 0 : 16 << (bitDepth - 8);
    const rangeY = fullRange ? max : 219 << (bitDepth - 8);
    const biasUV = 1 << (bitDepth - 1);
    const rangeUV = fullRange ? max : 224 << (bitDepth - 8);
    this.luma = new Float64Array(max + 1);
    for (let code = 0; code <= max; code++) this.luma[code] = (255 * (code - biasY)) / rangeY + 0.5 + CLAMP_OFFSET;
    const weight = this.subsampledX ? 16 : 1;
    this.chromaScale = 255 / (weight * rangeUV);
    this.chromaBias = (-255 * biasUV) / rangeUV;
    const [kr, kb] = KR_KB[matrix] ?? KR_KB[2];
    const kg = 1 - kr - kb;
    this.rFromCr = 2 * (1 - kr);
    this.bFromCb = 2 * (1 - kb);
    this.gFromCb = (2 * kb * (1 - kb)) / kg;
    this.gFromCr = (2 * kr * (1 - kr)) / kg;
  }

  /** The chroma rows output row `y` blends (c0, c1) in a picture of `height` rows. */
  chromaRows(y: number, height: number): [number, number] {
    if (!this.subsampledY) return [y, y];
    const c0 = y >> 1;
    if (this.upsampling === 'nearest' || y === 0 || (y === height - 1 && (y & 1) === 1)) return [c0, c0];
    return [c0, (y & 1) === 1 ? c0 + 1 : c0 - 1];
  }

  /**
   * Converts `count` pixels of one row, starting at column `x0` of a picture `width` pixels wide,
   * into `out` from pixel `at` on, as RGBA words with alpha 255.
   */
  convert(out: Uint32Array, at: number, x0: number, count: number, width: number, rows: RowSamples): void {
    if (this.mode === 'mono') this.monoRow(out, at, x0, count, rows);
    else if (this.mode === 'yuv' && this.subsampledX) this.subsampledRow(out, at, x0, count, width, rows);
    else if (this.mode === 'yuv') this.fullChromaRow(out, at, x0, count, rows);
    else this.otherRow(out, at, x0, count, width, rows, null);
  }

  /**
   * As `convert`, for colour that was multiplied by alpha before encoding (`prem`): each channel is
   * divided by alpha (0..1, from `alpha`) before rounding, as libavif un-premultiplies in float.
   */
  convertPremultiplied(out: Uint32Array, at: number, x0: number, count: number, width: number, rows: RowSamples, alpha: Float64Array): void {
    this.otherRow(out, at, x0, count, width, rows, alpha);
  }

  private monoRow(out: Uint32Array, at: number, x0: number, count: number, rows: RowSamples): void {
    const { y, yAt } = rows;
    const luma = this.luma;
    for (let i = 0, from = yAt + x0; i < count; i++) {
      const c = CLAMP[luma[y[from + i]] | 0];
      out[at + i] = c | (c << 8) | (c << 16) | OPAQUE;
    }
  }

  private fullChromaRow(out: Uint32Array, at: number, x0: number, count: number, rows: RowSamples): void {
    const { y, yAt, u0, u0At, v0, v0At } = rows;
    const { luma, chromaScale, chromaBias } = this;
    const [aR, cR, aGu, aGv, cG, aB, cB] = this.coefficients(chromaScale, chromaBias);
    for (let i = 0; i < count; i++) {
      const x = x0 + i;
      const l = luma[y[yAt + x]];
      const su = u0[u0At + x];
      const sv = v0[v0At + x];
      out[at + i] = CLAMP[(l + sv * aR + cR) | 0] | (CLAMP[(l - su * aGu - sv * aGv + cG) | 0] << 8) | (CLAMP[(l + su * aB + cB) | 0] << 16) | OPAQUE;
    }
  }

  /** R = l + sv aR + cR, G = l - su aGu - sv aGv + cG, B = l + su aB + cB, for weighted chroma sums su, sv. */
  private coefficients(scale: number, bias: number): number[] {
    const { rFromCr, gFromCb, gFromCr, bFromCb } = this;
    return [rFromCr * scale, rFromCr * bias, gFromCb * scale, gFromCr * scale, -(gFromCb + gFromCr) * bias, bFromCb * scale, bFromCb * bias];
  }

  /** Blends chroma rows c0 and c1 for the columns pixels [x0, x0 + count) read (see blendU). */
  private blendChroma(x0: number, count: number, width: number, rows: RowSamples): void {
    const chromaWidth = (width + 1) >> 1;
    if (this.blendU.length < chromaWidth + 2) {
      this.blendU = new Int32Array(chromaWidth + 2);
      this.blendV = new Int32Array(chromaWidth + 2);
    }
    const { blendU, blendV } = this;
    const { u0, u0At, u1, u1At, v0, v0At, v1, v1At } = rows;
    const first = Math.max(0, (x0 >> 1) - 1);
    const last = Math.min(chromaWidth - 1, ((x0 + count - 1) >> 1) + 1);
    if (u0 === u1 && u0At === u1At) {
      for (let k = first; k <= last; k++) {
        blendU[k + 1] = 4 * u0[u0At + k];
        blendV[k + 1] = 4 * v0[v0At + k];
      }
    } else {
      for (let k = first; k <= last; k++) {
        blendU[k + 1] = 3 * u0[u0At + k] + u1[u1At + k];
        blendV[k + 1] = 3 * v0[v0At + k] + v1[v1At + k];
      }
    }
    if (first === 0) {
      blendU[0] = blendU[1];
      blendV[0] = blendV[1];
    }
    if (last === chromaWidth - 1) {
      blendU[chromaWidth + 1] = blendU[chromaWidth];
      blendV[chromaWidth + 1] = blendV[chromaWidth];
    }
  }

  /** Fills redTerms/greenTerms/blueTerms for the columns pixels [x0, x0 + count) read. */
  private chromaTerms(x0: number, count: number, width: number, rows: RowSamples): void {
    const chromaWidth = (width + 1) >> 1;
    if (this.redTerms.length < chromaWidth + 2) {
      this.redTerms = new Float64Array(chromaWidth + 2);
      this.greenTerms = new Float64Array(chromaWidth + 2);
      this.blueTerms = new Float64Array(chromaWidth + 2);
    }
    const { redTerms, greenTerms, blueTerms } = this;
    const [aR, cR, aGu, aGv, cG, aB, cB] = this.coefficients(this.chromaScale, this.chromaBias);
    const [qR, qG, qB] = [cR / 4, cG / 4, cB / 4];
    const { u0, u0At, u1, u1At, v0, v0At, v1, v1At } = rows;
    const first = Math.max(0, (x0 >> 1) - 1);
    const last = Math.min(chromaWidth - 1, ((x0 + count - 1) >> 1) + 1);
    // Without a second row (4:2:2, nearest, the edges) that row's weight goes to the first: 4 c0.
    const [uOther, uOtherAt, vOther, vOtherAt, weight] = u0 === u1 && u0At === u1At ? [u0, u0At, v0, v0At, 4] : [u1, u1At, v1, v1At, 3];
    const [rOther, gOtherU, gOtherV, bOther] = weight === 4 ? [0, 0, 0, 0] : [aR, aGu, aGv, aB];
    const [rFirst, gFirstU, gFirstV, bFirst] = [aR * weight, aGu * weight, aGv * weight, aB * weight];
    for (let k = first; k <= last; k++) {
      const u = u0[u0At + k];
      const v = v0[v0At + k];
      const uNext = uOther[uOtherAt + k];
      const vNext = vOther[vOtherAt + k];
      redTerms[k + 1] = v * rFirst + vNext * rOther + qR;
      greenTerms[k + 1] = qG - u * gFirstU - uNext * gOtherU - v * gFirstV - vNext * gOtherV;
      blueTerms[k + 1] = u * bFirst + uNext * bOther + qB;
    }
    if (first === 0) {
      redTerms[0] = redTerms[1];
      greenTerms[0] = greenTerms[1];
      blueTerms[0] = blueTerms[1];
    }
    if (last === chromaWidth - 1) {
      redTerms[chromaWidth + 1] = redTerms[chromaWidth];
      greenTerms[chromaWidth + 1] = greenTerms[chromaWidth];
      blueTerms[chromaWidth + 1] = blueTerms[chromaWidth];
    }
  }

  /**
   * 4:2:0 and 4:2:2. Pixel 2k blends chroma column k with its left neighbour, pixel 2k + 1 with its
   * right one (libavif's choice); 'nearest' takes column k alone.
   */
  private subsampledRow(out: Uint32Array, at: number, x0: number, count: number, width: number, rows: RowSamples): void {
    this.chromaTerms(x0, count, width, rows);
    const { y, yAt } = rows;
    const { luma, redTerms, greenTerms, blueTerms } = this;
    const nearest = this.upsampling === 'nearest';
    const left = nearest ? 1 : 0; // index offsets of the neighbour in the terms, relative to column k
    const right = nearest ? 1 : 2;
    const end = x0 + count;
    let x = x0;
    let p = at;
    if ((x & 1) === 1 && x < end) {
      const k = x >> 1;
      const l = luma[y[yAt + x]];
      out[p++] =
        CLAMP[(l + 3 * redTerms[k + 1] + redTerms[k + right]) | 0] |
        (CLAMP[(l + 3 * greenTerms[k + 1] + greenTerms[k + right]) | 0] << 8) |
        (CLAMP[(l + 3 * blueTerms[k + 1] + blueTerms[k + right]) | 0] << 16) |
        OPAQUE;
      x++;
    }
    // Two pixels per chroma column: the even one with the left neighbour, the odd one with the right.
    for (; x + 1 < end; x += 2, p += 2) {
      const k = x >> 1;
      const red = 3 * redTerms[k + 1];
      const green = 3 * greenTerms[k + 1];
      const blue = 3 * blueTerms[k + 1];
      let l = luma[y[yAt + x]];
      out[p] = CLAMP[(l + red + redTerms[k + left]) | 0] | (CLAMP[(l + green + greenTerms[k + left]) | 0] << 8) | (CLAMP[(l + blue + blueTerms[k + left]) | 0] << 16) | OPAQUE;
      l = luma[y[yAt + x + 1]];
      out[p + 1] = CLAMP[(l + red + redTerms[k + right]) | 0] | (CLAMP[(l + green + greenTerms[k + right]) | 0] << 8) | (CLAMP[(l + blue + blueTerms[k + right]) | 0] << 16) | OPAQUE;
    }
    if (x < end) {
      const k = x >> 1;
      const l = luma[y[yAt + x]];
      out[p] =
        CLAMP[(l + 3 * redTerms[k + 1] + redTerms[k + left]) | 0] |
        (CLAMP[(l + 3 * greenTerms[k + 1] + greenTerms[k + left]) | 0] << 8) |
        (CLAMP[(l + 3 * blueTerms[k + 1] + blueTerms[k + left]) | 0] << 16) |
        OPAQUE;
    }
  }

  /**
   * Every mode, per pixel in floating point: identity (GBR), YCgCo, and premultiplied colour. Slower;
   * these are rare in files.
   */
  private otherRow(out: Uint32Array, at: number, x0: number, count: number, width: number, rows: RowSamples, alpha: Float64Array | null): void {
    const mono = this.mode === 'mono';
    if (this.subsampledX && !mono) this.blendChroma(x0, count, width, rows);
    const { y, yAt, u0, u0At, v0, v0At } = rows;
    const { luma, chromaScale, chromaBias, blendU, blendV } = this;
    const nearest = this.upsampling === 'nearest';
    const unit = (code: number) => (luma[code] - 0.5 - CLAMP_OFFSET) / 255;
    for (let i = 0; i < count; i++) {
      const x = x0 + i;
      // Normalised to 0..1 (Y) and -0.5..0.5 (Cb, Cr) again, as libavif computes.
      const l = unit(y[yAt + x]);
      let cb = 0;
      let cr = 0;
      let cbCode = 0;
      let crCode = 0;
      if (!mono && this.subsampledX) {
        const k = x >> 1;
        const neighbour = k + (nearest ? 1 : (x & 1) === 0 ? 0 : 2);
        cb = ((3 * blendU[k + 1] + blendU[neighbour]) * chromaScale + chromaBias) / 255;
        cr = ((3 * blendV[k + 1] + blendV[neighbour]) * chromaScale + chromaBias) / 255;
      } else if (!mono) {
        cbCode = u0[u0At + x];
        crCode = v0[v0At + x];
        cb = (cbCode * chromaScale + chromaBias) / 255;
        cr = (crCode * chromaScale + chromaBias) / 255;
      }
      let r: number;
      let g: number;
      let b: number;
      if (mono) {
        r = g = b = l;
      } else if (this.mode === 'identity') {
        // GBR: every plane is normalised like luma (libavif reuses the luma table).
        g = l;
        b = unit(cbCode);
        r = unit(crCode);
      } else if (this.mode === 'ycgco') {
        const t = l - cb;
        g = l + cb;
        b = t - cr;
        r = t + cr;
      } else {
        r = l + this.rFromCr * cr;
        g = l - this.gFromCb * cb - this.gFromCr * cr;
        b = l + this.bFromCb * cb;
      }
      r = r < 0 ? 0 : r > 1 ? 1 : r;
      g = g < 0 ? 0 : g > 1 ? 1 : g;
      b = b < 0 ? 0 : b > 1 ? 1 : b;
      if (alpha) {
        const a = alpha[i];
        if (a === 0) {
          r = g = b = 0;
        } else if (a < 1) {
          r = Math.min(r / a, 1);
          g = Math.min(g / a, 1);
          b = Math.min(b / a, 1);
        }
      }
      out[at + i] = ((0.5 + 255 * r) | 0) | (((0.5 + 255 * g) | 0) << 8) | (((0.5 + 255 * b) | 0) << 16) | OPAQUE;
    }
  }
}

/**
 * Alpha codes to 8-bit alpha and to 0..1, for an alpha plane of `bitDepth` bits: limited-range
 * alpha (allowed by AVIF 1.0.0) is first stretched to full range as libavif does (integer
 * rounding), then scaled as (int)(0.5 + 255 a / max).
 */
export class AlphaTable {
  readonly bytes: Uint8Array;
  readonly unit: Float64Array;

  constructor(bitDepth: number, fullRange: boolean) {
    const max = 2 ** bitDepth - 1;
    this.bytes = new Uint8Array(max + 1);
    this.unit = new Float64Array(max + 1);
    const low = 16 << (bitDepth - 8);
    const high = 235 << (bitDepth - 8);
    for (let code = 0; code <= max; code++) {
      let full = code;
      if (!fullRange) {
        full = Math.trunc(((code - low) * max + Math.trunc((high - low) / 2)) / (high - low));
        full = full < 0 ? 0 : full > max ? max : full;
      }
      this.unit[code] = full / max;
      this.bytes[code] = Math.min(255, Math.trunc(0.5 + (full / max) * 255));
    }
  }
}
