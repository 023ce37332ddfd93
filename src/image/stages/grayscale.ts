import { srgbDecode, srgbEncode } from './colour/srgb';
import { pixelWords } from './pixels';
import { forward, type RowSource } from './rows';

/*
 * sharp's greyscale(): libvips' sRGB -> B_W, the CIE luminance of the linear colour
 * (0.2126 R + 0.7152 G + 0.0722 B) encoded back with libvips' own 8-bit tables, so each grey is the
 * one sharp gives. Alpha is kept.
 */

/** vips_v2Y_8: linear light of each 8-bit value. */
const LINEAR = Float64Array.from({ length: 256 }, (_, v) => Math.fround(srgbDecode(v / 255)));
/** vips_Y2v_8: the 8-bit value of i / 255 linear, with the last repeated for interpolation. */
const ENCODED = Int32Array.from({ length: 257 }, (_, i) => Math.round(255 * srgbEncode(Math.min(i, 255) / 255)));

/** One pixel word's grey as libvips computes it (vips_col_scRGB2BW_8). */
export function greyOf(px: number): number {
  const luminance = 0.2126 * LINEAR[px & 255] + 0.7152 * LINEAR[(px >> 8) & 255] + 0.0722 * LINEAR[(px >> 16) & 255];
  const at = Math.min(255, Math.max(0, luminance * 255));
  const i = Math.trunc(at);
  return Math.round(ENCODED[i] + (ENCODED[i + 1] - ENCODED[i]) * (at - i));
}

/** The grayscale stage: each band's pixels made grey in place. */
export function grayscaleRows(source: RowSource): RowSource {
  if (source.grey) return source;
  return {
    ...forward(source),
    grey: true,
    async read() {
      const band = await source.read();
      if (!band) return band;
      const words = pixelWords(band.data);
      for (let i = 0; i < band.rows * source.width; i++) {
        const px = words[i];
        const grey = greyOf(px);
        words[i] = grey | (grey << 8) | (grey << 16) | (px & 0xff000000);
      }
      return band;
    },
  };
}
