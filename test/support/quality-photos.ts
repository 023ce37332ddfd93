import type { Step } from '../../src/image/operations';
import { processImage } from '../../src/image/pipeline';
import type { RgbaImage } from '../../src/image/types';

/**
 * The repository's photos at 1-3 MP, the set issue 39's "Done when" lines are measured over
 * (docs/decisions.md, "quality=auto"): the photos of ../shared/corpus/photos, each picture once
 * (photo-12mp.webp and .avif are the 12 MP JPEG's picture again), the 12 and 24 MP ones resized to
 * about 1.2 MP by the service's own Lanczos-3, and the other real photo of the corpus, the fox the
 * AVIF samples were made from. The 1 MP photo and the fox are used as they are (0.96 MP).
 */
export const QUALITY_PHOTOS: readonly PhotoSource[] = [
  { name: 'photo-1mp', file: 'photos/photo-1mp.jpg', steps: [] },
  { name: 'photo-12mp', file: 'photos/photo-12mp.jpg', steps: [{ op: 'resize', width: 1264 }] },
  { name: 'photo-24mp', file: 'photos/photo-24mp.jpg', steps: [{ op: 'resize', width: 1344 }] },
  { name: 'fox', file: 'avif/fox.jpg', steps: [] },
];

/**
 * The nine photos the 24 MP mosaic is made of, each cut at its seams (2000 x 1333) and resized to
 * 1500 x 1000: quality=auto's calibration (bench/quality-calibration.ts) measures over these and
 * QUALITY_PHOTOS; the tests over QUALITY_PHOTOS alone, which costs a quarter of the time.
 */
export const MOSAIC_PHOTOS: readonly PhotoSource[] = Array.from({ length: 9 }, (_, i) => ({
  name: `photo-24mp cell ${i + 1}`,
  file: 'photos/photo-24mp.jpg',
  steps: [
    { op: 'crop', x: (i % 3) * 2000, y: Math.floor(i / 3) * 1333, width: 2000, height: 1333 },
    { op: 'resize', width: 1500 },
  ],
}));

export interface PhotoSource {
  name: string;
  /** Under ../shared/corpus. */
  file: string;
  /** What makes the photo of the file (the service's own crop and Lanczos-3). */
  steps: Step[];
}

export interface QualityPhoto {
  name: string;
  /** The photo as a PNG: an upload whose pixels are exactly `pixels`. */
  png: Uint8Array;
  pixels: RgbaImage & { data: Uint8Array };
}

const LIMITS = { maxInputPixels: 50e6, maxOutputPixels: 50e6, memoryBudgetBytes: 100 * 2 ** 20 };

/** A photo made from its corpus file's bytes: a PNG of exactly its pixels. */
export async function photoPng(source: PhotoSource, file: Uint8Array): Promise<Uint8Array> {
  return (await processImage(file, { steps: source.steps, format: 'png' }, LIMITS)).bytes;
}
