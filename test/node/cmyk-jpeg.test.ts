/// <reference types="node" />
/**
 * The vendored jpeg-js decoder (the CMYK/YCCK path of the JPEG codec) against libjpeg through
 * sharp, on the fixtures of test/fixtures/cmyk. sharp's reference is the stored CMYK with Adobe's
 * inversion undone, i.e. ink amounts: `pipelineColourspace('cmyk').toColourspace('cmyk')` keeps
 * libvips from converting through any ICC profile (plain `.toColourspace('cmyk')` goes
 * CMYK -> sRGB -> CMYK and changes the values).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { decodeJpegComponents } from '../../src/image/codecs/vendor/jpeg-js-decoder.js';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/cmyk');
const fixture = (name: string) => new Uint8Array(readFileSync(path.join(FIXTURES, name)));

async function sharpInk(bytes: Uint8Array): Promise<Uint8Array> {
  const { data, info } = await sharp(bytes).pipelineColourspace('cmyk').toColourspace('cmyk').raw().toBuffer({ resolveWithObject: true });
  expect(info.channels).toBe(4);
  return new Uint8Array(data.buffer, data.byteOffset, data.length);
}

interface Difference {
  max: number;
  mean: number;
  /** Share of samples more than 3 levels apart. */
  over3: number;
}

function difference(a: Uint8Array, b: Uint8Array): Difference {
  expect(a.length).toBe(b.length);
  let max = 0;
  let sum = 0;
  let over3 = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    max = Math.max(max, d);
    sum += d;
    if (d > 3) over3++;
  }
  return { max, mean: sum / a.length, over3: over3 / a.length };
}

/** Adobe APP14 transform byte (0 = CMYK, 2 = YCCK), or undefined without the marker. */
function adobeTransform(bytes: Uint8Array): number | undefined {
  for (let at = 2; at + 4 < bytes.length && bytes[at] === 0xff && bytes[at + 1] !== 0xda; ) {
    const length = (bytes[at + 2] << 8) | bytes[at + 3];
    if (bytes[at + 1] === 0xee && String.fromCharCode(...bytes.subarray(at + 4, at + 9)) === 'Adobe') return bytes[at + 15];
    at += 2 + length;
  }
  return undefined;
}

describe('CMYK fixtures', () => {
  it.each([
    ['cmyk-adobe.jpg', 0, true],
    ['cmyk-noprofile.jpg', 0, false],
    ['cmyk-progressive.jpg', 0, true],
    ['ycck-adobe.jpg', 2, true],
    ['ycck-420.jpg', 2, true],
  ] as const)('%s is what sharp calls CMYK, Adobe transform %i, profile %s', async (name, transform, hasProfile) => {
    const bytes = fixture(name);
    const metadata = await sharp(bytes).metadata();
    expect({ space: metadata.space, channels: metadata.channels, hasProfile: metadata.hasProfile, width: metadata.width, height: metadata.height }).toEqual({
      space: 'cmyk',
      channels: 4,
      hasProfile,
      width: 96,
      height: 64,
    });
    expect(adobeTransform(bytes)).toBe(transform);
  });

  it('the YCCK files hold the same ink as cmyk-adobe.jpg, as libjpeg decodes them', async () => {
    const cmyk = await sharpInk(fixture('cmyk-adobe.jpg'));
    const ycck = difference(cmyk, await sharpInk(fixture('ycck-adobe.jpg')));
    expect(ycck.mean).toBeLessThan(1);
    expect(ycck.max).toBeLessThanOrEqual(12); // a second q95 encode of the same ink
    expect(difference(cmyk, await sharpInk(fixture('ycck-420.jpg'))).mean).toBeLessThan(5); // 4:2:0 loses chroma detail
  });
});

describe('vendored jpeg-js decoder against libjpeg (sharp)', () => {
  it.each([
    // name, max, mean: plain CMYK differs only by IDCT rounding; YCCK adds the colour transform
    // (libjpeg's fixed-point tables against jpeg-js's floating point). The 4:2:0 chroma goes through
    // the same "fancy" (triangle) upsampling as libjpeg's, so it adds nothing measurable: measured
    // max 3, mean 0.08 (nearest-neighbour upsampling was max 145, mean 4.05).
    ['cmyk-adobe.jpg', 1, 0.1],
    ['cmyk-noprofile.jpg', 1, 0.1],
    ['cmyk-progressive.jpg', 1, 0.1],
    ['ycck-adobe.jpg', 3, 0.15],
    ['ycck-420.jpg', 4, 0.15],
  ] as const)('%s: ink within %i levels (mean under %f)', async (name, max, mean) => {
    const bytes = fixture(name);
    const decoded = decodeJpegComponents(bytes);
    expect({ width: decoded.width, height: decoded.height, components: decoded.components }).toEqual({ width: 96, height: 64, components: 4 });
    const diff = difference(decoded.data, await sharpInk(bytes));
    console.log(name, diff);
    expect(diff.max).toBeLessThanOrEqual(max);
    expect(diff.mean).toBeLessThan(mean);
  });

  it('reads a 4-component JPEG without the Adobe marker like libvips: as Adobe-inverted CMYK', async () => {
    const bytes = fixture('cmyk-noprofile.jpg');
    const at = bytes.findIndex((b, i) => b === 0xff && bytes[i + 1] === 0xee);
    const length = (bytes[at + 2] << 8) | bytes[at + 3];
    const stripped = new Uint8Array([...bytes.subarray(0, at), ...bytes.subarray(at + 2 + length)]);
    const ours = decodeJpegComponents(stripped).data;
    const reference = await sharp(Buffer.from(stripped)).pipelineColourspace('cmyk').toColourspace('cmyk').raw().toBuffer();
    expect(ours.length).toBe(reference.length);
    expect(ours.every((value, i) => Math.abs(value - reference[i]) <= 1)).toBe(true);
  });

  it('keeps its pixel and memory guards', () => {
    expect(() => decodeJpegComponents(fixture('cmyk-adobe.jpg'), { maxResolutionInMP: 0.001 })).toThrow(/maxResolutionInMP/);
    expect(() => decodeJpegComponents(fixture('cmyk-adobe.jpg'), { maxMemoryUsageInMB: 0.01 })).toThrow(/maxMemoryUsageInMB/);
  });
});
