import { pixelWords } from './pixels';
import type { RgbaImage } from './types';

/**
 * Composites the image over opaque white, for formats without alpha (JPEG): a transparent
 * logo becomes a logo on white, not on whatever colour its invisible pixels happen to hold.
 * Works in place and returns the same image.
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
  // In place: the pipeline owns the frame, and a second full-size copy could cost 48 MB at 12 MP.
  const data = image.data;
  for (let i = 0; i < data.length; i += 4) {
    const alpha = data[i + 3];
    const white = 255 * (255 - alpha);
    data[i] = ((data[i] * alpha + white + 127) / 255) | 0;
    data[i + 1] = ((data[i + 1] * alpha + white + 127) / 255) | 0;
    data[i + 2] = ((data[i + 2] * alpha + white + 127) / 255) | 0;
    data[i + 3] = 255;
  }
  return image;
}
