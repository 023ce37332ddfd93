/** Pixel comparison for tests: PSNR and exact-match counts between two RGBA images of one size. */
export interface PixelComparison {
  /** PSNR in dB over R, G, B of visible pixels and over alpha (Infinity when identical). */
  psnr: number;
  /** Pixels whose visible colour or alpha differs at all. */
  differingPixels: number;
  /** Largest difference of any channel. */
  maxDifference: number;
}

interface Rgba {
  data: ArrayLike<number>;
  width: number;
  height: number;
}

/**
 * Colour under a fully transparent pixel is invisible and decoders are free to differ there, so
 * R, G and B only count where either image has alpha > 0; alpha always counts.
 */
export function comparePixels(a: Rgba, b: Rgba): PixelComparison {
  if (a.width !== b.width || a.height !== b.height) throw new Error(`size ${a.width}x${a.height} vs ${b.width}x${b.height}`);
  let squares = 0;
  let samples = 0;
  let differingPixels = 0;
  let maxDifference = 0;
  for (let i = 0; i < a.data.length; i += 4) {
    const visible = a.data[i + 3] > 0 || b.data[i + 3] > 0;
    let differs = false;
    for (let c = visible ? 0 : 3; c < 4; c++) {
      const d = Math.abs(a.data[i + c] - b.data[i + c]);
      squares += d * d;
      samples++;
      if (d > 0) differs = true;
      if (d > maxDifference) maxDifference = d;
    }
    if (differs) differingPixels++;
  }
  const mse = squares / samples;
  return { psnr: mse === 0 ? Infinity : 10 * Math.log10((255 * 255) / mse), differingPixels, maxDifference };
}
