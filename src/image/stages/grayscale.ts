import { srgbDecode, srgbEncode } from './colour/srgb';
import { GRAYSCALE_KERNEL_BYTES, GrayscaleKernels } from './filter-kernels';
import { forward, type RowSource } from './rows';

/*
 * sharp's greyscale(): libvips' sRGB -> B_W, the CIE luminance of the linear colour
 * (0.2126 R + 0.7152 G + 0.0722 B) encoded back with libvips' own 8-bit tables, so each grey is the
 * one sharp gives. Alpha is kept. The kernels (codecs/kernels/filters.c) do it with these tables.
 */

/** vips_v2Y_8: linear light of each 8-bit value. */
export const GREY_LINEAR = Float64Array.from({ length: 256 }, (_, v) => Math.fround(srgbDecode(v / 255)));
/** vips_Y2v_8: the 8-bit value of i / 255 linear, with the last repeated for interpolation. */
export const GREY_ENCODED = Int32Array.from({ length: 257 }, (_, i) => Math.round(255 * srgbEncode(Math.min(i, 255) / 255)));

/** Bytes the grayscale stage holds (memory-plan.ts): the kernels' memory, the same for every size. */
export const grayscaleBytes = (): number => GRAYSCALE_KERNEL_BYTES;

/** The grayscale stage: each band's pixels made grey in place. */
export function grayscaleRows(source: RowSource): RowSource {
  if (source.grey) return source;
  const kernels = new GrayscaleKernels(GREY_LINEAR, GREY_ENCODED);
  return {
    ...forward(source),
    grey: true,
    async read() {
      const band = await source.read();
      if (band) kernels.apply(band.data.subarray(0, band.rows * source.width * 4));
      return band;
    },
    heldBytes: () => source.heldBytes() + GRAYSCALE_KERNEL_BYTES,
  };
}
