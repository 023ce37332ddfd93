import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors';
import { webpChunks } from '../../src/image/formats/webp/riff';
import { applyOrientation } from '../../src/image/stages/orient';
import { processImage } from '../../src/image/pipeline';
import { detectFormat } from '../../src/image/formats/index';
import type { RgbaImage } from '../../src/image/types';
import { corpus, corpusList, fixture, fixtureList } from './helpers';
import { referenceDecode } from './images';
import { comparePixels, type PixelComparison } from '../support/compare-pixels';

/**
 * Every file of ../shared/corpus through convert to PNG, compared with an independent decoder
 * (sharp/libvips, colour-managed and auto-oriented; test/support/reference-decoder.ts): lossless
 * sources must match exactly, lossy ones by at least 30 dB PSNR.
 */
// Decoding fidelity only: full-size PNG results of the 12 MP photos are over a deployed isolate's
// memory, which test/workers/memory-budget.test.ts covers.
const LIMITS = { maxInputPixels: 40_000_000, maxOutputPixels: 40_000_000, memoryBudgetBytes: 8192 * 2 ** 20 };
const MIN_LOSSY_PSNR = 30;
// Files the corpus README marks as broken: PngSuite's x* files must be refused.
const BROKEN = /\/x[^/]*\.png$/;
// Edge cases where a correct decoder may produce an image: libwebp decodes the 86-byte
// very_short.webp and maps out-of-table palette indexes to transparent black (WebP lossless
// spec), and libjpeg fills a damaged scan with grey. A decode or a clear refusal are both right.
const EITHER_OUTCOME = /very_short\.webp$|bad_palette_index\.webp$|bad-exif\/corrupted\.jpg$/;

// Where the reference decoder is wrong, the file is compared with a better reference instead.
const REFERENCE_OVERRIDES: Record<string, { file: string; asGrey: boolean; why: string }> = {
  'avif/fox.profile0.8bpc.yuv420.monochrome.avif': {
    file: 'avif/fox.profile0.8bpc.yuv420.avif',
    asGrey: true,
    why: 'libheif leaves monochrome AVIF in limited range (black at 11, white at 239); the grey of the colour encode of the same photo is the truth',
  },
};

const FOLDERS = ['png/pngsuite', 'webp', 'avif', 'jpeg/camera', 'jpeg/orientation', 'jpeg/bad-exif', 'photos'];
const results: Array<{ file: string; lossless: boolean; comparison: PixelComparison }> = [];

function isLossless(input: Uint8Array): boolean {
  const format = detectFormat(input);
  if (format === 'png') return true;
  if (format !== 'webp') return false;
  const types = [...webpChunks(input)].map((chunk) => chunk.type);
  return types.includes('VP8L') && !types.includes('VP8 ');
}

async function convertAndCompare(file: string, input: Uint8Array): Promise<'ok' | string> {
  let output: Uint8Array;
  try {
    output = (await processImage(input, { steps: [], format: 'png', quality: 80 }, LIMITS)).bytes;
  } catch (error) {
    if (!(error instanceof AppError)) throw new Error(`${file}: ${error}`);
    return error.code;
  }
  if (EITHER_OUTCOME.test(file)) return 'ok';
  const override = REFERENCE_OVERRIDES[file];
  const [ours, reference]: RgbaImage[] = await Promise.all([
    referenceDecode(output),
    override ? referenceDecode(await corpus(override.file)).then((image) => (override.asGrey ? toGrey(image) : image)) : referenceDecode(input),
  ]);
  const lossless = isLossless(input);
  const comparison = comparePixels(ours, reference);
  results.push({ file, lossless, comparison });
  if (lossless) expect(comparison.differingPixels, `${file}: pixels that differ from the reference`).toBe(0);
  else expect(comparison.psnr, `${file}: PSNR against the reference`).toBeGreaterThanOrEqual(MIN_LOSSY_PSNR);
  return 'ok';
}

describe.each(FOLDERS)('every file of ../shared/corpus/%s, converted to PNG', (folder) => {
  it('matches the reference decoder, or is refused with UNSUPPORTED_FORMAT when broken', { timeout: 300_000 }, async () => {
    const files = await corpusList(folder);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const outcome = await convertAndCompare(file, await corpus(file));
      if (BROKEN.test(file)) expect(outcome, file).toBe('UNSUPPORTED_FORMAT');
      else if (EITHER_OUTCOME.test(file)) expect(['ok', 'UNSUPPORTED_FORMAT'], file).toContain(outcome);
      else expect(outcome, file).toBe('ok');
    }
  });
});

describe('AVIF with alpha at 8, 10 and 12 bits (test/fixtures/alpha, which the corpus lacks)', () => {
  it('matches the reference decoder, alpha included', { timeout: 60_000 }, async () => {
    const files = await fixtureList('alpha');
    expect(files).toHaveLength(3);
    for (const file of files) expect(await convertAndCompare(file, await fixture(file)), file).toBe('ok');
  });
});

describe('the 16 EXIF-oriented JPEGs', () => {
  // The corpus files are separate encodes (and _2.._8 carry Apple's Generic RGB profile), so they
  // match _1 only to about 25 dB; upright means: same size as _1, and closer to _1 than any flip
  // or half turn of itself is.
  it('all come out upright: each landscape_N and portrait_N looks like its orientation-1 file', { timeout: 60_000 }, async () => {
    for (const shape of ['landscape', 'portrait']) {
      const upright = await convertedPixels(`jpeg/orientation/${shape}_1.jpg`);
      for (let n = 2; n <= 8; n++) {
        const oriented = await convertedPixels(`jpeg/orientation/${shape}_${n}.jpg`);
        expect([oriented.width, oriented.height], `${shape}_${n}`).toEqual([upright.width, upright.height]);
        const [asIs, ...wrong] = ([1, 2, 3, 4] as const).map((turn) => comparePixels(applyOrientation(oriented, turn), upright).psnr);
        expect(asIs, `${shape}_${n} against ${shape}_1`).toBeGreaterThan(Math.max(...wrong) + 5);
      }
    }
  });
});

function toGrey(image: RgbaImage): RgbaImage {
  const data = new Uint8Array(image.data);
  for (let i = 0; i < data.length; i += 4) {
    const y = Math.round(0.2126 * data[i] + 0.7152 * data[i + 1] + 0.0722 * data[i + 2]);
    data[i] = data[i + 1] = data[i + 2] = y;
  }
  return { ...image, data };
}

async function convertedPixels(file: string): Promise<RgbaImage> {
  const result = await processImage(await corpus(file), { steps: [], format: 'png', quality: 80 }, LIMITS);
  return referenceDecode(result.bytes);
}

afterAll(() => {
  if (results.length === 0) return;
  const lossy = results.filter((r) => !r.lossless).map((r) => r.comparison.psnr).sort((a, b) => a - b);
  const at = (q: number) => lossy[Math.min(lossy.length - 1, Math.floor(q * lossy.length))]?.toFixed(1);
  const exact = results.filter((r) => r.lossless && r.comparison.differingPixels === 0).length;
  console.log(
    `corpus vs reference: ${results.length} files compared; lossless ${results.filter((r) => r.lossless).length} (${exact} exact); ` +
      `lossy ${lossy.length}, PSNR min ${at(0)} / p10 ${at(0.1)} / median ${at(0.5)} / max ${at(1)} dB`,
  );
  for (const r of results.filter((r) => !r.lossless)) console.log(`  ${r.file}: ${r.comparison.psnr.toFixed(1)} dB`);
});
