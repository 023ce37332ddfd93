import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors';
import { readDimensions } from '../../src/image/formats';
import { readOrientation } from '../../src/image/exif';
import { processImage } from '../../src/image/pipeline';
import { detectFormat } from '../../src/image/sniff';
import { corpus, corpusList } from './helpers';
import { decodeImage } from './images';

const LIMITS = { maxInputPixels: 40_000_000, maxOutputPixels: 40_000_000 };
// Files the corpus README marks as broken: PngSuite's x* files must be refused.
const BROKEN = /\/x[^/]*\.png$/;
// Edge cases where a correct decoder may produce an image: libwebp decodes the 86-byte
// very_short.webp and maps out-of-table palette indexes to transparent black (WebP lossless
// spec), and libjpeg fills a damaged scan with grey. A decode or a clear refusal are both right.
const EITHER_OUTCOME = /very_short\.webp$|bad_palette_index\.webp$|bad-exif\/corrupted\.jpg$/;

const FOLDERS = ['png/pngsuite', 'webp', 'avif', 'jpeg/camera', 'jpeg/orientation', 'jpeg/bad-exif'];

describe.each(FOLDERS)('every file of ../shared/corpus/%s through convert to PNG', (folder) => {
  it('gives a correct PNG, or UNSUPPORTED_FORMAT for a broken file, never anything else', async () => {
    const files = await corpusList(folder);
    expect(files.length).toBeGreaterThan(0);
    const outcomes: string[] = [];
    for (const file of files) {
      const input = await corpus(file);
      try {
        const result = await processImage(input, { kind: 'convert', format: 'png', quality: 80 }, LIMITS);
        const format = detectFormat(input)!;
        const stored = readDimensions(format, input);
        const rotated = readOrientation(format, input) >= 5;
        expect([result.width, result.height], file).toEqual(rotated ? [stored.height, stored.width] : [stored.width, stored.height]);
        const decoded = await decodeImage('png', result.bytes);
        expect([decoded.width, decoded.height], file).toEqual([result.width, result.height]);
        outcomes.push(`${file}: ok`);
      } catch (error) {
        if (!(error instanceof AppError)) throw new Error(`${file}: ${error}`);
        outcomes.push(`${file}: ${error.code}`);
      }
    }
    for (const outcome of outcomes) {
      const file = outcome.split(':')[0];
      if (BROKEN.test(file)) expect(outcome).toBe(`${file}: UNSUPPORTED_FORMAT`);
      else if (EITHER_OUTCOME.test(file)) expect(outcome).toMatch(/: (ok|UNSUPPORTED_FORMAT)$/);
      else expect(outcome).toBe(`${file}: ok`);
    }
  });
});
