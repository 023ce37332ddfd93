import type { Region } from '../../operations';
import type { Dimensions } from '../../types';
import type { CleanAperture } from './properties';

/**
 * The crop a `clap` describes (ISO/IEC 14496-12 12.1.4.1 with MIAF 7.3.6.7's integer rules), as
 * libavif's avifCropRectFromCleanApertureBox computes it: width and height whole numbers, the
 * aperture centred at (size / 2 + offset), its left and top edges whole and inside the image.
 * Odd edges in subsampled chroma need no special case here: the crop is taken from RGB.
 *
 * An invalid `clap` gives null and the whole image is shown, as Chromium and Android do (libavif
 * in strict mode refuses the file; libheif clamps it): the pixels are all there, and refusing a
 * file because of a cropping hint helps nobody.
 */
export function cleanApertureCrop(clap: CleanAperture, image: Dimensions): Region | null {
  // libavif reads every field as int32; unsigned values past 2^31 are negative there, so invalid.
  const asInt32 = (value: number) => (value >= 2 ** 31 ? value - 2 ** 32 : value);
  const widthN = BigInt(asInt32(clap.widthN));
  const widthD = BigInt(asInt32(clap.widthD));
  const heightN = BigInt(asInt32(clap.heightN));
  const heightD = BigInt(asInt32(clap.heightD));
  const horizOffD = BigInt(asInt32(clap.horizOffD));
  const vertOffD = BigInt(asInt32(clap.vertOffD));
  if (widthD <= 0n || heightD <= 0n || horizOffD <= 0n || vertOffD <= 0n) return null;
  if (widthN < 0n || heightN < 0n || widthN % widthD !== 0n || heightN % heightD !== 0n) return null;
  const width = widthN / widthD;
  const height = heightN / heightD;
  const x = leftEdge(BigInt(image.width), BigInt(clap.horizOffN), horizOffD, width);
  const y = leftEdge(BigInt(image.height), BigInt(clap.vertOffN), vertOffD, height);
  if (x === null || y === null || width === 0n || height === 0n) return null;
  if (x + width > BigInt(image.width) || y + height > BigInt(image.height)) return null;
  return { x: Number(x), y: Number(y), width: Number(width), height: Number(height) };
}

/** size / 2 + offsetN / offsetD - aperture / 2, when it is a whole number >= 0. */
function leftEdge(size: bigint, offsetN: bigint, offsetD: bigint, aperture: bigint): bigint | null {
  const numerator = size * offsetD + 2n * offsetN - aperture * offsetD;
  const denominator = 2n * offsetD;
  if (numerator < 0n || numerator % denominator !== 0n) return null;
  return numerator / denominator;
}
