import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors';
import { FORMATS } from '../../src/image/formats/index';
import { decodeWith } from '../support/image-testing';
import { processImage } from '../../src/image/pipeline';
import { detectFormat } from '../../src/image/formats/index';
import { metadataFound } from '../support/metadata-found';
import { corpus, corpusList, fixture, fixtureList } from './helpers';

const LIMITS = { maxInputPixels: 40_000_000, maxOutputPixels: 40_000_000, memoryBudgetBytes: 100 * 2 ** 20 };
const FOLDERS = ['png/pngsuite', 'webp', 'avif', 'jpeg/camera', 'jpeg/orientation', 'jpeg/bad-exif', 'photos'];
// Broken on purpose (PngSuite x*) or decodable only by some decoders: see corpus.test.ts.
const SKIPPED = /\/x[^/]*\.png$|very_short\.webp$|bad_palette_index\.webp$|bad-exif\/corrupted\.jpg$/;

async function expectCleanAndIdentical(name: string, input: Uint8Array): Promise<string[]> {
  const format = detectFormat(input)!;
  const before = metadataFound(format, input);
  const output = await processImage(input, { steps: [{ op: 'remove-metadata' }], quality: 80 }, LIMITS);
  expect(output.format, name).toBe(format);
  expect(metadataFound(format, output.bytes), name).toEqual([]);
  const [original, stripped] = await Promise.all([decodeWith(format, input), decodeWith(format, output.bytes)]);
  expect([stripped.width, stripped.height], name).toEqual([original.width, original.height]);
  expect(Buffer.compare(Buffer.from(stripped.data), Buffer.from(original.data)), `${name}: decoded pixels differ`).toBe(0);
  return before;
}

describe.each(FOLDERS)('remove-metadata on every file of ../shared/corpus/%s', (folder) => {
  it('leaves no EXIF, XMP, ICC or text metadata, and the same decoded pixels', { timeout: 300_000 }, async () => {
    let withMetadata = 0;
    for (const file of await corpusList(folder)) {
      if (SKIPPED.test(file)) continue;
      if ((await expectCleanAndIdentical(file, await corpus(file))).length > 0) withMetadata++;
    }
    console.log(`${folder}: ${withMetadata} files carried metadata before the strip`);
  });
});

describe('remove-metadata on the colour test images (test/fixtures)', () => {
  it('drops their ICC profiles and keeps their pixels', async () => {
    const files = [...(await fixtureList('colour')), ...(await fixtureList('cmyk'))];
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const before = await expectCleanAndIdentical(file, await fixture(file));
      const carriesProfile = before.some((found) => /ICC|iCCP|ICCP|colr/.test(found));
      expect(carriesProfile, `${file} carried a profile: ${before}`).toBe(!file.includes('noprofile'));
    }
  });
});

describe('the metadata inspector used above', () => {
  it('sees the metadata of known files, so the checks above can fail', async () => {
    expect(metadataFound('jpeg', await corpus('jpeg/camera/Canon_40D.jpg'))).toContain('APP1 Exif');
    expect(metadataFound('png', await corpus('png/pngsuite/ctzn0g04.png'))).toContain('zTXt');
    expect(metadataFound('avif', await corpus('photos/photo-12mp.avif'))).toContain('colr rICC');
    expect(metadataFound('jpeg', await corpus('photos/photo-1mp.jpg'))).toEqual(expect.arrayContaining(['APP2 ICC_PROFILE']));
  });

  it('a corrupt file is refused, not passed off as clean', async () => {
    const truncated = (await corpus('photos/photo-1mp.jpg')).subarray(0, 5000);
    await expect(processImage(truncated, { steps: [{ op: 'remove-metadata' }], quality: 80 }, LIMITS)).rejects.toBeInstanceOf(AppError);
  });
});
