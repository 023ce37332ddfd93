import { env } from 'cloudflare:test';
import { FORMATS } from '../../src/image/formats/index';
import { decodeRgba, encodeWith } from '../support/image-testing';
import { concat } from '../../src/image/bytes';
import { pngChunk } from '../../src/image/formats/png/header';
import { PNG_SIGNATURE } from '../../src/image/formats/png/header';
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
  return encodeWith(format, image, quality);
}

export function decodeImage(format: ImageFormat, bytes: Uint8Array): Promise<RgbaImage> {
  return decodeRgba(format, bytes);
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
  const ihdr = new Uint8Array(13);
  new DataView(ihdr.buffer).setUint32(0, width);
  new DataView(ihdr.buffer).setUint32(4, height);
  ihdr.set([8, 6, 0, 0, 0], 8);
  return concat([Uint8Array.from(PNG_SIGNATURE), pngChunk('IHDR', ihdr), pngChunk('IEND')]);
}

/** The reference decoder's view of a file (sharp, in Node): upright, sRGB, 8-bit RGBA. */
export async function referenceDecode(bytes: Uint8Array): Promise<RgbaImage> {
  const response = await env.REFERENCE.fetch('http://reference/', { method: 'POST', body: bytes });
  if (!response.ok) throw new Error(`reference decoder: ${response.status} ${await response.text()}`);
  const width = Number(response.headers.get('x-width'));
  const height = Number(response.headers.get('x-height'));
  return { data: new Uint8Array(await response.arrayBuffer()), width, height };
}
