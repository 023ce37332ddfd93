import { WHITE, type Colour } from '../operations';
import { forward, type RowSource } from './rows';

/**
 * The flatten stage, for formats without alpha (JPEG): pixels are composited over an opaque
 * background (white unless the request names one; its alpha is ignored), so a transparent logo
 * becomes a logo on that colour, not on whatever colour its invisible pixels happen to hold.
 * Sources without alpha pass through; bands are changed in place.
 */
export function flattenRows(source: RowSource, background: Colour = WHITE): RowSource {
  if (!source.alpha) return source;
  return {
    ...forward(source),
    alpha: false,
    async read() {
      const band = await source.read();
      if (band) flattenOnto(band.data, background);
      return band;
    },
  };
}

/** RGBA pixels composited over an opaque `background`, in place. */
export function flattenOnto(data: Uint8Array, { r, g, b }: Colour): void {
  for (let i = 0; i < data.length; i += 4) {
    const alpha = data[i + 3];
    if (alpha === 255) continue;
    const rest = 255 - alpha;
    data[i] = ((data[i] * alpha + r * rest + 127) / 255) | 0;
    data[i + 1] = ((data[i + 1] * alpha + g * rest + 127) / 255) | 0;
    data[i + 2] = ((data[i + 2] * alpha + b * rest + 127) / 255) | 0;
    data[i + 3] = 255;
  }
}
