import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { gradient } from '../../../../test/workers/images';
import { AppError } from '../../../errors';
import { concat } from '../../bytes';
import { FORMATS } from '../index';
import { readWebpDimensions } from './header';
import { webpChunk, webpChunks } from './riff';
import { processImage } from '../../pipeline';
import { corpus, decodeRgba, decodeWebp, encodeWith, expectAppError, mutated, prefixLengths, resultOrAppError, sameBytes, WEBPS } from '../../../../test/support/image-testing';
import type { RgbaImage } from '../../types';
import type { FrameRect } from './header';
import { firstFrameAsStill, placeOnCanvas } from '../../../../test/support/webp-reference';

// --- A small builder of animated WebPs (RIFF / VP8X with the animation flag / ANIM / ANMF...) ---

const ANIMATION_FLAG = 0x02;
const ALPHA_FLAG = 0x10;

const le24 = (v: number) => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff];

const chunk = webpChunk;

function riff(...chunks: Uint8Array[]): Uint8Array {
  const body = concat(chunks);
  const header = new Uint8Array(12);
  header.set([0x52, 0x49, 0x46, 0x46], 0);
  new DataView(header.buffer).setUint32(4, 4 + body.length, true);
  header.set([0x57, 0x45, 0x42, 0x50], 8);
  return concat([header, body]);
}

const vp8x = (width: number, height: number, flags = ANIMATION_FLAG | ALPHA_FLAG) => chunk('VP8X', [flags, 0, 0, 0, ...le24(width - 1), ...le24(height - 1)]);
const anim = () => chunk('ANIM', [0xff, 0xff, 0xff, 0xff, 0, 0]);

/** The image chunks (ALPH, VP8, VP8L) of a still WebP, ready to be an ANMF's frame data. */
function frameData(still: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const c of webpChunks(still)) {
    if (c.type === 'ALPH' || c.type === 'VP8 ' || c.type === 'VP8L') parts.push(chunk(c.type, still.subarray(c.data, c.data + c.length)));
  }
  return concat(parts);
}

function chunkTypes(bytes: Uint8Array): string[] {
  return [...webpChunks(bytes)].map((c) => c.type);
}

/** An ANMF chunk; x and y must be even (they are stored halved). `flags`: bit 1 = no blending, bit 0 = dispose. */
function anmf(rect: FrameRect, data: Uint8Array, flags = 0): Uint8Array {
  return chunk('ANMF', [...le24(rect.x / 2), ...le24(rect.y / 2), ...le24(rect.width - 1), ...le24(rect.height - 1), ...le24(100), flags, ...data]);
}

interface Frame {
  still: Uint8Array;
  x?: number;
  y?: number;
}

/** An animated WebP of `frames` (still WebP files) on a `width` x `height` canvas. */
function animatedWebp(width: number, height: number, frames: Frame[]): Uint8Array {
  const anmfs = frames.map(({ still, x = 0, y = 0 }) => anmf({ x, y, ...readWebpDimensions(still) }, frameData(still)));
  return riff(vp8x(width, height), anim(), ...anmfs);
}

// --- Frames ---

/** A second, different picture: the gradient mirrored and inverted. */
function other(width: number, height: number): RgbaImage {
  const image = gradient(width, height);
  for (let i = 0; i < image.data.length; i += 4) {
    image.data[i] = 255 - image.data[i];
    image.data[i + 2] = 255 - image.data[i + 1];
  }
  return image;
}

/** The gradient with varying alpha (0 included), so the encoder writes VP8X + ALPH + VP8. */
function translucent(width: number, height: number): RgbaImage {
  const image = gradient(width, height);
  for (let i = 0; i < image.data.length; i += 4) image.data[i + 3] = (i * 7) & 255;
  return image;
}

const encodeWebp = (image: RgbaImage) => encodeWith('webp', image, 90);
const decodeAnimated = (bytes: Uint8Array) => decodeRgba('webp', bytes);

function expectSamePixels(actual: RgbaImage, expected: RgbaImage, what: string): void {
  expect([actual.width, actual.height], what).toEqual([expected.width, expected.height]);
  expect(sameBytes(actual.data, expected.data), what).toBe(true);
}

/** The pixel at (x, y) as [r, g, b, a]. */
function pixel(image: RgbaImage, x: number, y: number): number[] {
  const i = (y * image.width + x) * 4;
  return [...image.data.subarray(i, i + 4)];
}

let opaqueA: Uint8Array; // 48x32 VP8
let opaqueB: Uint8Array; // 48x32 VP8, other picture
let alphaSmall: Uint8Array; // 20x10 VP8X + ALPH + VP8

beforeAll(async () => {
  opaqueA = await encodeWebp(gradient(48, 32));
  opaqueB = await encodeWebp(other(48, 32));
  alphaSmall = await encodeWebp(translucent(20, 10));
  expect(chunkTypes(opaqueA)).toEqual(['VP8 ']);
  expect(chunkTypes(alphaSmall)).toEqual(['VP8X', 'ALPH', 'VP8 ']);
});

describe('firstFrameAsStill', () => {
  it('returns null for still WebP files and non-WebP bytes', async () => {
    for (const path of Object.keys(WEBPS).filter((p) => !p.startsWith('photos/'))) {
      expect(firstFrameAsStill(await corpus(path)), path).toBeNull();
    }
    expect(firstFrameAsStill(opaqueA)).toBeNull();
    expect(firstFrameAsStill(alphaSmall)).toBeNull();
    expect(firstFrameAsStill(new Uint8Array(0))).toBeNull();
    expect(firstFrameAsStill(new TextEncoder().encode('RIFF\x10\0\0\0WEBPVP8X'))).toBeNull();
    // VP8X without the animation flag, even with ANMF chunks, is left to the still decoder.
    expect(firstFrameAsStill(riff(vp8x(48, 32, 0), anim(), anmf({ x: 0, y: 0, width: 48, height: 32 }, frameData(opaqueA))))).toBeNull();
  });

  it('wraps a VP8 first frame as a plain still and an ALPH + VP8 one with a VP8X alpha header', () => {
    const plain = firstFrameAsStill(animatedWebp(48, 32, [{ still: opaqueA }, { still: opaqueB }]))!;
    expect(plain.canvas).toEqual({ width: 48, height: 32 });
    expect(plain.frame).toEqual({ x: 0, y: 0, width: 48, height: 32 });
    expect(chunkTypes(plain.still)).toEqual(['VP8 ']);
    expect(sameBytes(plain.still, opaqueA)).toBe(true);

    const withAlpha = firstFrameAsStill(animatedWebp(64, 40, [{ still: alphaSmall, x: 6, y: 12 }, { still: opaqueB }]))!;
    expect(withAlpha.canvas).toEqual({ width: 64, height: 40 });
    expect(withAlpha.frame).toEqual({ x: 6, y: 12, width: 20, height: 10 });
    expect(chunkTypes(withAlpha.still)).toEqual(['VP8X', 'ALPH', 'VP8 ']);
    expect(withAlpha.still[20] & ALPHA_FLAG).toBe(ALPHA_FLAG);
    expect(withAlpha.still[20] & ANIMATION_FLAG).toBe(0);
    expect(readWebpDimensions(withAlpha.still)).toEqual({ width: 20, height: 10 });
  });

  it('rejects damaged animations with UNSUPPORTED_FORMAT', () => {
    const full = { x: 0, y: 0, width: 48, height: 32 };
    const data = frameData(opaqueA);
    const vp8lData = frameData(riff(chunk('VP8L', [0x2f, ...le24((47) | (31 << 14)), 0, 0, 0, 0])));
    const alph = chunk('ALPH', [0, 1, 2]);
    const cases: [string, Uint8Array][] = [
      ['no frames', riff(vp8x(48, 32), anim())],
      ['ANMF before ANIM', riff(vp8x(48, 32), anmf(full, data))],
      ['short ANIM', riff(vp8x(48, 32), chunk('ANIM', [0, 0, 0, 0]), anmf(full, data))],
      ['short ANMF', riff(vp8x(48, 32), anim(), chunk('ANMF', [0, 0, 0, 0, 0, 0, 0, 0]))],
      ['frame past the canvas (x)', riff(vp8x(48, 32), anim(), anmf({ ...full, x: 2 }, data))],
      ['frame past the canvas (height)', riff(vp8x(48, 32), anim(), anmf({ ...full, height: 33 }, data))],
      ['frame size is not the bitstream size', riff(vp8x(64, 64), anim(), anmf({ ...full, width: 40 }, data))],
      ['bitstream larger than the frame (pixel bomb)', riff(vp8x(48, 32), anim(), anmf({ ...full, width: 8, height: 8 }, data))],
      ['no bitstream', riff(vp8x(48, 32), anim(), anmf(full, alph))],
      ['empty frame', riff(vp8x(48, 32), anim(), anmf(full, new Uint8Array(0)))],
      ['ALPH with VP8L', riff(vp8x(48, 32), anim(), anmf(full, concat([alph, vp8lData])))],
      ['bare VP8 in an animation', riff(vp8x(48, 32), anim(), chunk('VP8 ', opaqueA.subarray(20)), anmf(full, data))],
      ['ANMF inside a frame', riff(vp8x(48, 32), anim(), anmf(full, anmf(full, data)))],
      ['frame data chunk past the ANMF', riff(vp8x(48, 32), anim(), anmf(full, data.subarray(0, data.length - 9)))],
      ['truncated VP8 header', riff(vp8x(48, 32), anim(), anmf(full, chunk('VP8 ', [0x10, 0, 0, 0x9d])))],
    ];
    for (const [what, bytes] of cases) {
      try {
        firstFrameAsStill(bytes);
      } catch (error) {
        expect(error, what).toBeInstanceOf(AppError);
        expect((error as AppError).code, what).toBe('UNSUPPORTED_FORMAT');
        continue;
      }
      throw new Error(`${what}: expected UNSUPPORTED_FORMAT, got a result`);
    }
  });

  it('skips unknown and metadata chunks around the first frame', () => {
    const full = { x: 0, y: 0, width: 48, height: 32 };
    const data = concat([chunk('UNKN', [1, 2, 3]), frameData(opaqueA), chunk('XTRA', [9])]);
    const bytes = riff(vp8x(48, 32), chunk('ICCP', [1, 2, 3, 4, 5]), anim(), chunk('EXIF', [0]), anmf(full, data), chunk('XMP ', [1]));
    const result = firstFrameAsStill(bytes)!;
    expect(sameBytes(result.still, opaqueA)).toBe(true);
  });

  it('gives the first frame or UNSUPPORTED_FORMAT for every prefix', () => {
    const bytes = animatedWebp(64, 40, [{ still: alphaSmall, x: 6, y: 12 }, { still: opaqueB }]);
    const whole = firstFrameAsStill(bytes)!;
    const firstFrameEnd = [...webpChunks(bytes)].find((c) => c.type === 'ANMF')!.end;
    for (const n of prefixLengths(bytes.length)) {
      const result = resultOrAppError(() => firstFrameAsStill(bytes.subarray(0, n)));
      if (n >= firstFrameEnd) expect(result, `prefix ${n}`).toBeDefined();
      if (result) expect(sameBytes(result.still, whole.still), `prefix ${n}`).toBe(true);
    }
  });

  it('gives a result or UNSUPPORTED_FORMAT for mutated animations', () => {
    const bytes = animatedWebp(64, 40, [{ still: alphaSmall, x: 6, y: 12 }, { still: opaqueB }]);
    fc.assert(
      fc.property(mutated(bytes, 200), (input) => {
        const result = resultOrAppError(() => firstFrameAsStill(input));
        if (result) {
          const { canvas, frame } = result;
          expect(frame.x + frame.width).toBeLessThanOrEqual(canvas.width);
          expect(frame.y + frame.height).toBeLessThanOrEqual(canvas.height);
          expect(readWebpDimensions(result.still)).toEqual({ width: frame.width, height: frame.height });
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('placeOnCanvas', () => {
  it('returns a frame covering the canvas unchanged and places a smaller one on transparent pixels', () => {
    const frame = gradient(3, 2);
    expect(placeOnCanvas(frame, { width: 3, height: 2 }, { x: 0, y: 0 })).toBe(frame);
    const placed = placeOnCanvas(frame, { width: 6, height: 5 }, { x: 2, y: 3 });
    expect([placed.width, placed.height, placed.data.length]).toEqual([6, 5, 120]);
    for (let y = 0; y < 5; y++) {
      for (let x = 0; x < 6; x++) {
        const inside = x >= 2 && x < 5 && y >= 3;
        expect(pixel(placed, x, y), `${x},${y}`).toEqual(inside ? pixel(frame, x - 2, y - 3) : [0, 0, 0, 0]);
      }
    }
    expectAppError(() => placeOnCanvas(frame, { width: 4, height: 2 }, { x: 2, y: 0 }), 'UNSUPPORTED_FORMAT');
  });
});

describe('webp codec: animated WebP decodes as its first frame', () => {
  it('decodes two encoded frames as exactly the first one, at the canvas size', async () => {
    const decoded = await decodeAnimated(animatedWebp(48, 32, [{ still: opaqueA }, { still: opaqueB }]));
    expectSamePixels(decoded, await decodeWebp(opaqueA), 'first frame');
    expect(sameBytes(decoded.data, (await decodeWebp(opaqueB)).data)).toBe(false);
  });

  it('decodes corpus stills (ALPH + VP8, VP8L) as first frames exactly', async () => {
    const lossyAlpha = await corpus('webp/lossy_alpha1.webp');
    const lossless = await corpus('webp/lossless1.webp');
    expect(chunkTypes(lossyAlpha)).toEqual(expect.arrayContaining(['VP8X', 'ALPH', 'VP8 ']));
    expect(chunkTypes(lossless)).toEqual(['VP8L']);
    const alphaFirst = animatedWebp(1000, 307, [{ still: lossyAlpha }, { still: lossless }]);
    expectSamePixels(await decodeAnimated(alphaFirst), await decodeWebp(lossyAlpha), 'lossy_alpha1 first');
    const losslessFirst = animatedWebp(1000, 307, [{ still: lossless }, { still: lossyAlpha }]);
    expectSamePixels(await decodeAnimated(losslessFirst), await decodeWebp(lossless), 'lossless1 first');
  });

  it('places an offset first frame on a transparent canvas', async () => {
    const bytes = animatedWebp(64, 40, [{ still: alphaSmall, x: 6, y: 12 }, { still: opaqueB }]);
    const decoded = await decodeAnimated(bytes);
    const frame = await decodeWebp(alphaSmall);
    expect([decoded.width, decoded.height]).toEqual([64, 40]);
    for (let y = 0; y < 40; y++) {
      for (let x = 0; x < 64; x++) {
        const inside = x >= 6 && x < 26 && y >= 12 && y < 22;
        expect(pixel(decoded, x, y), `${x},${y}`).toEqual(inside ? pixel(frame, x - 6, y - 12) : [0, 0, 0, 0]);
      }
    }
  });

  it('processes mutated animations to a result or UNSUPPORTED_FORMAT / FILE_TOO_LARGE, never another error', async () => {
    const bytes = animatedWebp(64, 40, [{ still: alphaSmall, x: 6, y: 12 }, { still: opaqueB }]);
    const limits = { maxInputPixels: 1 << 16, maxOutputPixels: 1 << 16, memoryBudgetBytes: 100 * 2 ** 20 };
    await fc.assert(
      fc.asyncProperty(mutated(bytes, 200), async (input) => {
        try {
          const result = await processImage(input, { steps: [], format: 'png', quality: 80 }, limits);
          expect(result.format).toBe('png');
        } catch (error) {
          if (!(error instanceof AppError) || !['UNSUPPORTED_FORMAT', 'FILE_TOO_LARGE'].includes(error.code)) throw error;
        }
      }),
      { numRuns: 300 },
    );
  });
});
