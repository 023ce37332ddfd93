/// <reference types="node" />
/**
 * The steps of POST /transform against sharp (libvips) on real photos: each step, and chains of
 * five, give the pixels sharp gives when it runs the same steps one after another (each sharp call
 * on the raw pixels the one before left, so nothing is encoded in between): RGB PSNR of at least
 * 35 dB, 30 for sharpen, whose Lab round trip differs from libvips' by a level here and there.
 * The inputs are parts of the corpus photos, kept small (the 24 MP case is memory's, in the
 * workers' steps test), and an EXIF-rotated camera JPEG for rotations after the file's own.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';

import type { Step, Transform } from '../../src/image/operations';
import { processImage } from '../../src/image/pipeline';

const CORPUS = path.resolve(import.meta.dirname, '../../../shared/corpus');
const LIMITS = { maxInputPixels: 100e6, maxOutputPixels: 100e6, memoryBudgetBytes: 2 ** 33 };

interface Pixels {
  data: Buffer;
  width: number;
  height: number;
  channels: number;
}

async function raw(image: Sharp): Promise<Pixels> {
  const { data, info } = await image.raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/** RGB PSNR (a grey picture's one channel counts as R = G = B). */
function psnr(a: Pixels, b: Pixels): number {
  expect([a.width, a.height]).toEqual([b.width, b.height]);
  const at = (p: Pixels, i: number, c: number) => p.data[i * p.channels + (p.channels < 3 ? 0 : c)];
  let sum = 0;
  const pixels = a.width * a.height;
  for (let i = 0; i < pixels; i++) for (let c = 0; c < 3; c++) sum += (at(a, i, c) - at(b, i, c)) ** 2;
  const mse = sum / (pixels * 3);
  return mse === 0 ? Infinity : 10 * Math.log10((255 * 255) / mse);
}

/** sharp running `step` on `pixels` as their own call. */
function sharpStep(pixels: Pixels, step: Step): Sharp {
  const image = sharp(pixels.data, { raw: { width: pixels.width, height: pixels.height, channels: pixels.channels as 3 | 4 } });
  switch (step.op) {
    case 'crop':
      return image.extract({ left: step.x, top: step.y, width: step.width, height: step.height });
    case 'resize':
      return image.resize(step.width, step.height, { fit: step.fit ?? 'inside', kernel: 'lanczos3' });
    case 'rotate':
      return image.rotate(step.angle);
    case 'flip':
      return step.axis === 'horizontal' ? image.flop() : image.flip();
    case 'blur':
      return image.blur(step.sigma);
    case 'sharpen':
      return image.sharpen({ sigma: step.sigma });
    case 'grayscale':
      return image.greyscale().toColourspace('srgb');
    default:
      throw new Error(`no sharp twin for ${step.op}`);
  }
}

async function theirs(start: Pixels, steps: Step[]): Promise<Pixels> {
  let pixels = start;
  for (const step of steps) pixels = await raw(sharpStep(pixels, step));
  return pixels;
}

async function ours(input: Uint8Array, steps: Step[]): Promise<Pixels & { size: { width: number; height: number } }> {
  const transform: Transform = { steps, format: 'png', quality: 80 };
  const result = await processImage(input, transform, LIMITS);
  const pixels = await raw(sharp(result.bytes));
  expect([pixels.width, pixels.height]).toEqual([result.width, result.height]);
  return { ...pixels, size: { width: result.width, height: result.height } };
}

const read = (file: string) => readFileSync(path.join(CORPUS, file));

describe('each step against sharp, on a part of a real photo', () => {
  /** 480x360 of the 1 MP photo, as a PNG (ours) and as sharp's raw pixels (theirs): the same start. */
  let png: Uint8Array;
  let start: Pixels;
  beforeAll(async () => {
    const part = sharp(read('photos/photo-1mp.jpg')).extract({ left: 300, top: 200, width: 480, height: 360 });
    start = await raw(part.clone().removeAlpha());
    png = new Uint8Array(await sharp(start.data, { raw: { width: 480, height: 360, channels: 3 } }).png().toBuffer());
  });

  const cases: [string, Step[], number][] = [
    ['crop', [{ op: 'crop', x: 17, y: 31, width: 301, height: 203 }], Infinity],
    ['resize to half', [{ op: 'resize', width: 240 }], 35],
    ['rotate 90', [{ op: 'rotate', angle: 90 }], Infinity],
    ['rotate 180', [{ op: 'rotate', angle: 180 }], Infinity],
    ['rotate 270', [{ op: 'rotate', angle: 270 }], Infinity],
    ['flip horizontal', [{ op: 'flip', axis: 'horizontal' }], Infinity],
    ['flip vertical', [{ op: 'flip', axis: 'vertical' }], Infinity],
    ['blur 0.3 (sharp: no change)', [{ op: 'blur', sigma: 0.3 }], 35],
    ['blur 1.5', [{ op: 'blur', sigma: 1.5 }], 35],
    ['blur 6', [{ op: 'blur', sigma: 6 }], 35],
    ['blur 25 (on a grid)', [{ op: 'blur', sigma: 25 }], 35],
    ['blur 400 (on a grid)', [{ op: 'blur', sigma: 400 }], 35],
    ['sharpen 0.5', [{ op: 'sharpen', sigma: 0.5 }], 30],
    ['sharpen 1', [{ op: 'sharpen', sigma: 1 }], 30],
    ['sharpen 10', [{ op: 'sharpen', sigma: 10 }], 30],
    ['grayscale', [{ op: 'grayscale' }], 35],
  ];
  it.each(cases)('%s', async (name, steps, minimum) => {
    const [mine, reference] = await Promise.all([ours(png, steps), theirs(start, steps)]);
    const db = psnr(mine, reference);
    console.log(`${name}: ${db.toFixed(2)} dB`);
    expect(db).toBeGreaterThanOrEqual(minimum);
  });

  it.each([
    ['crop -> resize -> rotate 90 -> blur -> flip', [
      { op: 'crop', x: 40, y: 20, width: 400, height: 300 },
      { op: 'resize', width: 250 },
      { op: 'rotate', angle: 90 },
      { op: 'blur', sigma: 1.2 },
      { op: 'flip', axis: 'vertical' },
    ], 35],
    ['rotate 270 -> crop -> grayscale -> resize (cover) -> sharpen', [
      { op: 'rotate', angle: 270 },
      { op: 'crop', x: 30, y: 50, width: 300, height: 400 },
      { op: 'grayscale' },
      { op: 'resize', width: 200, height: 200, fit: 'cover' },
      { op: 'sharpen', sigma: 1 },
    ], 30],
  ] as [string, Step[], number][])('five steps: %s', async (name, steps, minimum) => {
    const [mine, reference] = await Promise.all([ours(png, steps), theirs(start, steps)]);
    const db = psnr(mine, reference);
    console.log(`${name}: ${db.toFixed(2)} dB`);
    expect(db).toBeGreaterThanOrEqual(minimum);
  });
});

describe('rotations and crops after an EXIF orientation', () => {
  it.each(['landscape_6.jpg', 'portrait_3.jpg', 'landscape_5.jpg'])('%s: rotate 90 -> crop -> flip horizontal, in the picture as shown', async (file) => {
    const input = read(`jpeg/orientation/${file}`);
    const steps: Step[] = [
      { op: 'rotate', angle: 90 },
      { op: 'crop', x: 20, y: 40, width: 200, height: 150 },
      { op: 'flip', axis: 'horizontal' },
    ];
    const upright = await raw(sharp(input).rotate().removeAlpha());
    const [mine, reference] = await Promise.all([ours(new Uint8Array(input), steps), theirs(upright, steps)]);
    // Our JPEG decoder and libjpeg-turbo's agree to within a level; the geometry must be exact.
    expect(psnr(mine, reference)).toBeGreaterThanOrEqual(40);
  });
});
