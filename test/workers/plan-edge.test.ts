import { describe, expect, it } from 'vitest';
import { readSettings } from '../../src/config';
import { AppError } from '../../src/errors';
import { detectFormat } from '../../src/image/formats/index';
import type { Operation } from '../../src/image/operations';
import { processImage } from '../../src/image/pipeline';
import type { ImageFormat } from '../../src/image/types';
import { readDimensions } from '../support/formats';
import { largeInput } from '../support/image-testing';

/*
 * The files at the edge of what the Pro plan accepts (50 MB, 50 MP), with the default
 * configuration: every operation and every output format either succeeds within 100 MiB held,
 * never more than the memory guard predicted, or is one of the refusals listed below, which name
 * the largest size that would fit (docs/performance.md has the measurements behind each).
 * remove-metadata to another format runs the same plan as convert to it, so it is run once per
 * input besides its lossless same-format path.
 */

const MiB = 2 ** 20;
const PRO = readSettings({}).pixelLimits.pro;
const FORMATS: ImageFormat[] = ['jpeg', 'png', 'webp', 'avif'];

const INPUTS = ['png-24mp-zlib6.png', 'avif-24mp.avif', 'webp-48mp.webp', 'jpeg-48mp.jpg'];

function operations(input: ImageFormat): [string, Operation][] {
  const other = input === 'jpeg' ? 'webp' : 'jpeg';
  return [
    ...FORMATS.map((format): [string, Operation] => [`convert to ${format}`, { kind: 'convert', format, quality: 80 }]),
    ...FORMATS.map((format): [string, Operation] => [`crop 2000x1500 to ${format}`, { kind: 'crop', region: { x: 1200, y: 900, width: 2000, height: 1500 }, format, quality: 80 }]),
    ...FORMATS.map((format): [string, Operation] => [`resize to 1600 px ${format}`, { kind: 'resize', width: 1600, keepAspectRatio: true, format, quality: 80 }]),
    ['remove-metadata', { kind: 'remove-metadata', quality: 80 }],
    [`remove-metadata to ${other}`, { kind: 'remove-metadata', format: other, quality: 80 }],
  ];
}

/** Cases measured not to fit 100 MiB (input: operation): each must be refused naming a size. */
const REFUSED = new Set<string>([]);

function expectedSize(operation: Operation, source: { width: number; height: number }) {
  if (operation.kind === 'crop') return { width: operation.region.width, height: operation.region.height };
  if (operation.kind === 'resize') return { width: 1600, height: Math.round((source.height * 1600) / source.width) };
  return source;
}

describe('the files at the edge of the Pro plan, every operation and output format', () => {
  it('has inputs as large as the plan allows', async () => {
    expect((await largeInput('png-24mp-zlib6.png')).byteLength).toBeGreaterThanOrEqual(45e6);
    expect((await largeInput('png-24mp-zlib6.png')).byteLength).toBeLessThanOrEqual(50 * MiB);
  });

  for (const name of INPUTS) {
    const inputFormat = name.split('-')[0] as ImageFormat;
    it.each(operations(inputFormat))(`${name}: %s`, async (label, operation) => {
      const input = await largeInput(name);
      const source = readDimensions(detectFormat(input)!, input);
      if (REFUSED.has(`${name}: ${label}`)) {
        const refusal = await processImage(input, operation, PRO).catch((error: unknown) => error);
        expect(refusal).toBeInstanceOf(AppError);
        expect(refusal).toMatchObject({ code: 'FILE_TOO_LARGE', message: expect.stringMatching(/can be at most [\d.]+ megapixels/) });
        return;
      }
      const result = await processImage(input, operation, PRO);
      expect(readDimensions(result.format, result.bytes)).toEqual(expectedSize(operation, source));
      expect(result.peakBytes).toBeLessThanOrEqual(result.plannedPeakBytes);
      expect(result.plannedPeakBytes).toBeLessThanOrEqual(100 * MiB);
    });
  }
});
