import { FORMATS } from '../../src/image/formats';
import { crc32 } from '../../src/image/header/png';
import type { ImageFormat, RgbaImage } from '../../src/image/types';

/** A small image with distinct, exactly known pixels: R = x, G = y, B = x ^ y, opaque. */
export function gradient(width: number, height: number): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      data.set([x & 255, y & 255, (x ^ y) & 255, 255], i);
    }
  }
  return { data, width, height };
}

export function encodeImage(format: ImageFormat, image: RgbaImage, quality = 90): Promise<Uint8Array> {
  return FORMATS[format].codec.encode(image, quality);
}

export function decodeImage(format: ImageFormat, bytes: Uint8Array): Promise<RgbaImage> {
  return FORMATS[format].codec.decode(bytes);
}

/** PSNR over RGB, in dB (Infinity for identical pixels). */
export function psnr(a: RgbaImage, b: RgbaImage): number {
  if (a.width !== b.width || a.height !== b.height) throw new Error(`size ${a.width}x${a.height} vs ${b.width}x${b.height}`);
  let sum = 0;
  for (let i = 0; i < a.data.length; i += 4) {
    for (let c = 0; c < 3; c++) {
      const d = a.data[i + c] - b.data[i + c];
      sum += d * d;
    }
  }
  const mse = sum / ((a.data.length / 4) * 3);
  return mse === 0 ? Infinity : 10 * Math.log10((255 * 255) / mse);
}

/** A PNG whose valid IHDR declares width x height, with no pixel data behind it: a pixel bomb. */
export function pngHeaderOnly(width: number, height: number): Uint8Array {
  const bytes = new Uint8Array(8 + 25 + 12);
  const view = new DataView(bytes.buffer);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  view.setUint32(8, 13);
  bytes.set([0x49, 0x48, 0x44, 0x52], 12);
  view.setUint32(16, width);
  view.setUint32(20, height);
  bytes.set([8, 6, 0, 0, 0], 24);
  view.setUint32(29, crc32(bytes.subarray(12, 29)));
  bytes.set([0x49, 0x45, 0x4e, 0x44], 37);
  view.setUint32(41, crc32(bytes.subarray(37, 41)));
  return bytes;
}
