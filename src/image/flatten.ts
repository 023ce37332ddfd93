import { pixelWords } from './pixels';
import type { RgbaImage } from './types';

/**
 * Composites the image over opaque white, for formats without alpha (JPEG): a transparent
 * logo becomes a logo on white, not on whatever colour its invisible pixels happen to hold.
 * Opaque images are returned as they are.
 */
export function flattenOnWhite(image: RgbaImage): RgbaImage {
  const words = pixelWords(image.data);
  let opaque = true;
  for (let i = 0; i < words.length; i++) {
    if (words[i] >>> 24 !== 255) {
      opaque = false;
      break;
    }
  }
  if (opaque) return image;
  const out = new Uint8Array(image.data.length);
  const src = image.data;
  for (let i = 0; i < src.length; i += 4) {
    const alpha = src[i + 3];
    const white = 255 * (255 - alpha);
    out[i] = (src[i] * alpha + white + 127) / 255;
    out[i + 1] = (src[i + 1] * alpha + white + 127) / 255;
    out[i + 2] = (src[i + 2] * alpha + white + 127) / 255;
    out[i + 3] = 255;
  }
  return { data: out, width: image.width, height: image.height };
}
