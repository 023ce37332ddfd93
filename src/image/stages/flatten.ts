import { forward, type RowSource } from './rows';

/**
 * The flatten stage, for formats without alpha (JPEG): pixels are composited over opaque white,
 * so a transparent logo becomes a logo on white, not on whatever colour its invisible pixels
 * happen to hold. Sources without alpha pass through; bands are changed in place.
 */
export function flattenRows(source: RowSource): RowSource {
  if (!source.alpha) return source;
  return {
    ...forward(source),
    alpha: false,
    async read() {
      const band = await source.read();
      if (band) flattenOnWhite(band.data);
      return band;
    },
  };
}

/** RGBA pixels composited over white, in place. */
export function flattenOnWhite(data: Uint8Array): void {
  for (let i = 0; i < data.length; i += 4) {
    const alpha = data[i + 3];
    if (alpha === 255) continue;
    const white = 255 * (255 - alpha);
    data[i] = ((data[i] * alpha + white + 127) / 255) | 0;
    data[i + 1] = ((data[i + 1] * alpha + white + 127) / 255) | 0;
    data[i + 2] = ((data[i + 2] * alpha + white + 127) / 255) | 0;
    data[i + 3] = 255;
  }
}
