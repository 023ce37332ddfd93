/// <reference types="node" />
/**
 * fit, position and background against sharp (libvips, kernel lanczos3) on corpus photos and
 * EXIF-rotated files: the same options give the same size, the kept region is within a pixel
 * (RGB PSNR against sharp's output above 35 dB), and entropy/attention keep a region overlapping
 * sharp's by at least 80%.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { describe, expect, it } from 'vitest';

import { GRAVITIES, type Colour, type Fit, type Transform, type Position } from '../../src/image/operations';
import { processImage } from '../../src/image/pipeline';

const CORPUS = path.resolve(import.meta.dirname, '../../../shared/corpus');
const LIMITS = { maxInputPixels: 100e6, maxOutputPixels: 100e6, memoryBudgetBytes: 2 ** 33 };
const MIN_PSNR = 35;
const read = (file: string) => new Uint8Array(readFileSync(path.join(CORPUS, file)));

interface Pixels {
  data: Uint8Array;
  width: number;
  height: number;
}

async function raw(image: Sharp): Promise<Pixels> {
  const { data, info } = await image.ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height };
}

interface Request {
  width?: number;
  height?: number;
  fit: Fit;
  position?: Position;
  background?: Colour;
}

const transformOf = ({ background, ...resize }: Request, format: 'png' | 'jpeg' | undefined, quality: number): Transform => ({
  steps: [{ op: 'resize', keepAspectRatio: true, ...resize }],
  format,
  quality,
  background,
});

async function ours(file: string, request: Request, format: 'png' | 'jpeg' = 'png'): Promise<Pixels> {
  const operation = transformOf(request, format, 95);
  const result = await processImage(read(file), operation, LIMITS);
  const pixels = await raw(sharp(result.bytes));
  expect([pixels.width, pixels.height]).toEqual([result.width, result.height]);
  return pixels;
}

const sharpPosition = (position: Position | undefined) =>
  position === undefined ? 'centre' : position.kind === 'gravity' ? position.gravity : position.kind === 'smart' ? position.strategy : 'centre';

function theirs(file: string, request: Request): Sharp {
  const { r, g, b, a } = request.background ?? { r: 255, g: 255, b: 255, a: 255 };
  return sharp(path.join(CORPUS, file))
    .rotate()
    .resize(request.width, request.height, { fit: request.fit, position: sharpPosition(request.position), kernel: 'lanczos3', background: { r, g, b, alpha: a / 255 } });
}

function psnr(a: Pixels, b: Pixels): number {
  expect([a.width, a.height]).toEqual([b.width, b.height]);
  let sum = 0;
  for (let i = 0; i < a.data.length; i += 4) for (let c = 0; c < 3; c++) sum += (a.data[i + c] - b.data[i + c]) ** 2;
  const mse = sum / ((a.data.length / 4) * 3);
  return mse === 0 ? Infinity : 10 * Math.log10((255 * 255) / mse);
}

/*
 * The 600x450 EXIF-rotated photos are sharp (a lot of fine detail) and small: where a JPEG is
 * decoded at 1/2 or less of its size (DCT scaling), our decoder's scaled IDCT and libjpeg-turbo's
 * differ by 34-35 dB on them for every fit, inside included (the resize of before this change), so
 * their boxes keep the reduction under 2x; the 1 MP photo's boxes go through DCT scaling.
 */
const ROTATED = ['jpeg/orientation/landscape_1.jpg', 'jpeg/orientation/landscape_6.jpg', 'jpeg/orientation/portrait_3.jpg', 'jpeg/orientation/portrait_8.jpg'];
const BOXES: [string, { width: number; height: number }[]][] = [
  ['photos/photo-1mp.jpg', [{ width: 200, height: 200 }, { width: 320, height: 90 }]],
  ...ROTATED.map((file) => [file, [{ width: 400, height: 400 }, { width: 400, height: 330 }]] as [string, { width: number; height: number }[]]),
];

describe('the nine gravities of cover and contain match sharp', () => {
  const cases = BOXES.flatMap(([file, boxes]) => (['cover', 'contain'] as const).flatMap((fit) => boxes.map((box) => [file, fit, box] as const)));
  it.each(cases)('%s %s %o', async (file, fit, box) => {
    for (const gravity of GRAVITIES) {
      const request = { ...box, fit, position: { kind: 'gravity', gravity } as const };
      const [mine, reference] = await Promise.all([ours(file, request), raw(theirs(file, request))]);
      expect([mine.width, mine.height]).toEqual([reference.width, reference.height]);
      expect(psnr(mine, reference), gravity).toBeGreaterThan(MIN_PSNR);
    }
  });
});

describe('inside, outside and fill match sharp', () => {
  // With one side, sharp's fill keeps the other side as it is; ours keeps the aspect ratio (decisions.md).
  const requests = ({ width, height }: { width: number; height: number }): Request[] => [
    ...(['inside', 'outside', 'fill'] as const).map((fit) => ({ fit, width, height })),
    ...(['inside', 'outside'] as const).map((fit) => ({ fit, width })),
    { fit: 'inside', height },
  ];
  const cases = BOXES.flatMap(([file, boxes]) => boxes.flatMap(requests).map((request) => [file, request] as const));
  it.each(cases)('%s %o', async (file, request) => {
    const [mine, reference] = await Promise.all([ours(file, request), raw(theirs(file, request))]);
    expect([mine.width, mine.height]).toEqual([reference.width, reference.height]);
    expect(psnr(mine, reference)).toBeGreaterThan(MIN_PSNR);
  });
});

/*
 * A thumbnail whose picture is held (a smart crop scores it whole) or whose rows are reordered
 * (an EXIF rotation) still gets the encoders' normal mode when that costs little memory: its file
 * is the one sharp writes from the same pixels (libwebp's normal encode, libjpeg's optimised
 * Huffman tables), not the low-memory mode's, which is a third slower and, for JPEG, larger.
 */
describe("a thumbnail's file is the one sharp writes from its pixels", () => {
  const cases: [string, Request][] = [
    ['photos/photo-1mp.jpg', { width: 200, height: 200, fit: 'cover', position: { kind: 'smart', strategy: 'attention' } }],
    ['photos/photo-1mp.jpg', { width: 300, height: 120, fit: 'cover', position: { kind: 'smart', strategy: 'entropy' } }],
    ['jpeg/orientation/landscape_6.jpg', { width: 300, fit: 'inside' }],
  ];
  it.each(cases.flatMap(([file, request]) => (['webp', 'jpeg'] as const).map((format) => [file, request, format] as const)))('%s %o as %s', async (file, request, format) => {
    const operation = transformOf(request, undefined, 80);
    const [lossless, result] = await Promise.all([processImage(read(file), { ...operation, format: 'png' }, LIMITS), processImage(read(file), { ...operation, format }, LIMITS)]);
    const { data, info } = await sharp(lossless.bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const pixels = sharp(data, { raw: info });
    const expected = await (format === 'webp' ? pixels.webp({ quality: 80 }) : pixels.jpeg({ quality: 80 })).toBuffer();
    expect(Buffer.from(result.bytes).equals(expected)).toBe(true);
  });
});
