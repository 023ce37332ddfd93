/// <reference types="node" />
/**
 * Our pure-TypeScript Lanczos-3 against libvips (through sharp) on corpus photos: the same raw
 * RGBA pixels go into both, and the RGB PSNR between the results must be at least 38 dB.
 *
 * Upscaling needs a note. libvips does not use Lanczos to enlarge: vips_resize() enlarges with
 * vips_affine() and the bicubic interpolator, and samples output pixel o at input o/scale - 0.5,
 * half an output pixel away from the centre-aligned (o + 0.5)/scale - 0.5 that we (and Pillow,
 * ImageMagick and vips_reduce itself when shrinking) use (libvips issues #517 and #4841). For
 * upscales the reference is therefore libvips' own enlargement to twice the target size,
 * sampled at its odd pixels: libvips puts output pixel 2o+1 of that image at input
 * (2o+1)/(2*scale) - 0.5 = (o + 0.5)/scale - 0.5, the centre-aligned position. The PSNR against
 * the plain, shifted sharp output is printed too.
 */
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';

import { processImage } from '../../src/image/pipeline';
import { fitGeometry } from '../../src/image/fit';
import { resize } from '../../src/image/stages/resize';
import type { RgbaImage } from '../../src/image/types';
import { crop } from '../support/row-sources';

const PHOTOS = path.resolve(import.meta.dirname, '../../../shared/corpus/photos');
const MIN_PSNR = 38;

async function decode(file: string): Promise<RgbaImage> {
  const { data, info } = await sharp(path.join(PHOTOS, file)).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  expect(info.channels).toBe(4);
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height };
}

async function libvipsResize(image: RgbaImage, width: number, height: number): Promise<Uint8Array> {
  const { data, info } = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 4 } })
    .resize(width, height, { kernel: 'lanczos3', fit: 'fill' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  expect([info.width, info.height, info.channels]).toEqual([width, height, 4]);
  return new Uint8Array(data.buffer, data.byteOffset, data.length);
}

/** libvips enlargement sampled on the centre-aligned grid (see the note at the top). */
async function libvipsUpscaleCentred(image: RgbaImage, width: number, height: number): Promise<Uint8Array> {
  const big = await libvipsResize(image, 2 * width, 2 * height);
  const words = new Uint32Array(big.buffer, big.byteOffset, big.length / 4);
  const out = new Uint32Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) out[y * width + x] = words[(2 * y + 1) * 2 * width + 2 * x + 1];
  }
  return new Uint8Array(out.buffer);
}

/** PSNR over R, G and B; `premultiply` compares colour * alpha (what is actually seen). */
function psnr(a: Uint8Array, b: Uint8Array, premultiply = false): number {
  expect(a.length).toBe(b.length);
  let sum = 0;
  for (let i = 0; i < a.length; i += 4) {
    for (let c = 0; c < 3; c++) {
      const d = premultiply ? (a[i + c] * a[i + 3] - b[i + c] * b[i + 3]) / 255 : a[i + c] - b[i + c];
      sum += d * d;
    }
  }
  const mse = sum / ((a.length / 4) * 3);
  return mse === 0 ? Infinity : 10 * Math.log10((255 * 255) / mse);
}

function alphaPsnr(a: Uint8Array, b: Uint8Array): number {
  let sum = 0;
  for (let i = 3; i < a.length; i += 4) sum += (a[i] - b[i]) ** 2;
  const mse = sum / (a.length / 4);
  return mse === 0 ? Infinity : 10 * Math.log10((255 * 255) / mse);
}

function report(name: string, from: RgbaImage, to: { width: number; height: number }, db: number, extra = ''): void {
  console.log(`resize ${name}: ${from.width}x${from.height} -> ${to.width}x${to.height}  PSNR ${db.toFixed(2)} dB${extra}`);
}

describe('resize against libvips (sharp, kernel lanczos3)', () => {
  it('photo-1mp.jpg -> 400 px wide', async () => {
    const src = await decode('photo-1mp.jpg');
    const size = fitGeometry(src, { width: 400 }).output;
    const ours = resize(src, size.width, size.height);
    const db = psnr(ours.data as Uint8Array, await libvipsResize(src, size.width, size.height));
    report('1 MP', src, size, db);
    expect(db).toBeGreaterThanOrEqual(MIN_PSNR);
  });

  it('photo-12mp.jpg -> 1000 px wide, and how long it takes', async () => {
    const src = await decode('photo-12mp.jpg');
    const size = fitGeometry(src, { width: 1000 }).output;
    const times: number[] = [];
    let ours: RgbaImage | undefined;
    for (let run = 0; run < 4; run++) {
      const t0 = performance.now();
      ours = resize(src, size.width, size.height);
      times.push(performance.now() - t0);
    }
    const db = psnr(ours!.data as Uint8Array, await libvipsResize(src, size.width, size.height));
    report('12 MP', src, size, db);
    console.log(
      `resize 12 MP -> ${size.width}x${size.height}: ${times.map((t) => t.toFixed(0)).join(', ')} ms (first run includes JIT warm-up; best ${Math.min(...times).toFixed(0)} ms)`,
    );
    expect(db).toBeGreaterThanOrEqual(MIN_PSNR);
    // A loose guard against pathological slowness only; the printed figure is what matters.
    expect(Math.min(...times)).toBeLessThan(3000);
  });

  it('2x upscale of a crop', async () => {
    const src = crop(await decode('photo-1mp.jpg'), { x: 300, y: 200, width: 400, height: 300 });
    const size = { width: 800, height: 600 };
    const ours = resize(src, size.width, size.height).data as Uint8Array;
    const db = psnr(ours, await libvipsUpscaleCentred(src, size.width, size.height));
    const shifted = psnr(ours, await libvipsResize(src, size.width, size.height));
    report('2x up', src, size, db, ` (centre-aligned libvips bicubic; plain sharp output, shifted half a pixel: ${shifted.toFixed(2)} dB)`);
    expect(db).toBeGreaterThanOrEqual(MIN_PSNR);
  });

  it('non-integer ratios, down and up', async () => {
    const photo = await decode('photo-1mp.jpg');
    const down = { width: 777, height: 518 }; // 1200x800 / 1.544
    const dbDown = psnr(resize(photo, down.width, down.height).data as Uint8Array, await libvipsResize(photo, down.width, down.height));
    report('non-integer down', photo, down, dbDown);
    expect(dbDown).toBeGreaterThanOrEqual(MIN_PSNR);

    const small = crop(photo, { x: 100, y: 50, width: 300, height: 200 });
    const up = { width: 707, height: 473 }; // x 2.357 / 2.365
    const dbUp = psnr(resize(small, up.width, up.height).data as Uint8Array, await libvipsUpscaleCentred(small, up.width, up.height));
    report('non-integer up', small, up, dbUp, ' (centre-aligned libvips bicubic)');
    expect(dbUp).toBeGreaterThanOrEqual(MIN_PSNR);
  });

  it('with an alpha channel (premultiplied colour and alpha compared)', async () => {
    const photo = await decode('photo-1mp.jpg');
    const src: RgbaImage = { data: Uint8Array.from(photo.data), width: photo.width, height: photo.height };
    for (let y = 0; y < src.height; y++) {
      for (let x = 0; x < src.width; x++) src.data[(y * src.width + x) * 4 + 3] = Math.round(127.5 + 127.5 * Math.sin(x / 97 + y / 61));
    }
    const size = { width: 777, height: 518 };
    const ours = resize(src, size.width, size.height).data as Uint8Array;
    const theirs = await libvipsResize(src, size.width, size.height);
    const db = psnr(ours, theirs, true);
    const dbAlpha = alphaPsnr(ours, theirs);
    report('alpha', src, size, db, ` (colour x alpha); alpha channel ${dbAlpha.toFixed(2)} dB`);
    expect(db).toBeGreaterThanOrEqual(MIN_PSNR);
    expect(dbAlpha).toBeGreaterThanOrEqual(MIN_PSNR);
  });

  it('the pipeline resizing photos from JPEG (shrink-on-load, then Lanczos-3) against libvips from the full decode', async () => {
    const limits = { maxInputPixels: 50e6, maxOutputPixels: 50e6, memoryBudgetBytes: 100 * 2 ** 20 };
    // 12 MP to 1000 px is libjpeg's 1/4 scale alone; to 1600 px 1/2 and then Lanczos-3; to 777 px 1/4 and Lanczos.
    for (const [file, width] of [['photo-12mp.jpg', 1000], ['photo-12mp.jpg', 1600], ['photo-12mp.jpg', 777], ['photo-24mp.jpg', 1000]] as const) {
      const input = readFileSync(path.join(PHOTOS, file));
      const src = await decode(file);
      const size = fitGeometry(src, { width }).output;
      const result = await processImage(new Uint8Array(input), { steps: [{ op: 'resize', width, keepAspectRatio: true }], format: 'png', quality: 80 }, limits);
      const ours = await sharp(result.bytes).ensureAlpha().raw().toBuffer();
      const db = psnr(new Uint8Array(ours.buffer, ours.byteOffset, ours.length), await libvipsResize(src, size.width, size.height));
      report(`pipeline ${file}`, src, size, db, ' (decoded at reduced size by libjpeg)');
      expect(db).toBeGreaterThanOrEqual(MIN_PSNR);
    }
  });
});
