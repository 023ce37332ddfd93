/// <reference types="node" />
/**
 * The benchmark's workloads: what the API is asked, what sharp does in this process for the
 * same result, what the outputs are compared with, and the target each must meet.
 */
import path from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { PROJECT_ROOT } from '../src/cli/d1.ts';
import type { RawImage } from '../test/support/ssim.ts';

export const PHOTOS_DIR = path.resolve(PROJECT_ROOT, '..', 'shared', 'corpus', 'photos');
export const PHOTO = { 1: 'photo-1mp.jpg', 12: 'photo-12mp.jpg', 24: 'photo-24mp.jpg' } as const;
export type Megapixels = keyof typeof PHOTO;

export const CROP = { x: 1000, y: 1000, width: 2000, height: 2000 } as const;

export interface TimedWorkload {
  id: 'W1' | 'W2' | 'W3' | 'W4' | 'W5' | 'W6' | 'W8' | 'W9' | 'W10' | 'W11';
  title: string;
  /** The input, a test/support/large-inputs.ts name; unset: the corpus JPEG of `megapixels`. */
  inputName?: string;
  /** Which corpus JPEG when no inputName (default 12 MP). */
  megapixels?: Megapixels;
  endpoint: string;
  fields: Record<string, string>;
  /** What the sharp side does, as printed. */
  sharpLabel: string;
  sharp: (input: Buffer) => Sharp;
  /**
   * Where the encoders' quality scales differ (AVIF): sharp's pipeline at another quality, so that
   * the bench also compares with sharp at the SSIM the API reached.
   */
  sharpAtQuality?: (input: Buffer, quality: number) => Sharp;
  /** The source pixels each output is compared with, from the source decoded by sharp. */
  reference: (source: RawImage) => Promise<RawImage>;
  target: string;
}

/** Raw RGB (3 channels) from any encoded image, decoded by sharp/libvips. */
export async function decodeRgb(input: Uint8Array | Buffer): Promise<RawImage> {
  const { data, info } = await sharp(input).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

const fromRaw = (image: RawImage) => sharp(image.data, { raw: { width: image.width, height: image.height, channels: image.channels as 3 } });

async function rawOut(pipeline: Sharp): Promise<RawImage> {
  const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

const same = async (source: RawImage) => source;

export const TIMED_WORKLOADS: TimedWorkload[] = [
  {
    id: 'W1',
    title: '12 MP JPEG -> resize 1000 px wide -> WebP q80',
    endpoint: '/api/v1/resize',
    fields: { width: '1000', format: 'webp', quality: '80' },
    sharpLabel: 'resize(1000).webp({quality:80})',
    sharp: (input) => sharp(input).resize(1000).webp({ quality: 80 }),
    // Lanczos-3 from the fully decoded source (no JPEG shrink-on-load), to 1000 px wide.
    reference: (source) =>
      rawOut(fromRaw(source).resize(1000, Math.round((source.height * 1000) / source.width), { kernel: 'lanczos3', fit: 'fill' })),
    target: '<= 1.0x sharp',
  },
  {
    id: 'W2',
    title: '12 MP JPEG -> JPEG q80, full size',
    endpoint: '/api/v1/convert',
    fields: { format: 'jpg', quality: '80' },
    sharpLabel: 'jpeg({quality:80}) (sharp defaults: baseline, 4:2:0, optimised Huffman tables)',
    sharp: (input) => sharp(input).jpeg({ quality: 80 }),
    reference: same,
    target: '<= 1.5x sharp, bytes <= sharp at SSIM >= sharp',
  },
  {
    id: 'W3',
    title: '12 MP JPEG -> AVIF q80',
    endpoint: '/api/v1/convert',
    fields: { format: 'avif', quality: '80' },
    sharpLabel: "avif({quality:80, effort:3}) (sharp's default chroma 4:4:4; quality scales differ between encoders: compare SSIM and bytes)",
    sharp: (input) => sharp(input).avif({ quality: 80, effort: 3 }),
    sharpAtQuality: (input, quality) => sharp(input).avif({ quality, effort: 3 }),
    reference: same,
    target: '<= 0.5x sharp effort 3 at equal SSIM, bytes <= 1.05x its',
  },
  {
    id: 'W4',
    title: `12 MP JPEG -> crop ${CROP.width}x${CROP.height} at (${CROP.x},${CROP.y}) -> JPEG q80`,
    endpoint: '/api/v1/crop',
    fields: { x: String(CROP.x), y: String(CROP.y), width: String(CROP.width), height: String(CROP.height) },
    sharpLabel: `extract(${CROP.x},${CROP.y},${CROP.width}x${CROP.height}).jpeg({quality:80})`,
    sharp: (input) => sharp(input).extract({ left: CROP.x, top: CROP.y, width: CROP.width, height: CROP.height }).jpeg({ quality: 80 }),
    reference: (source) => rawOut(fromRaw(source).extract({ left: CROP.x, top: CROP.y, width: CROP.width, height: CROP.height })),
    target: '<= 1.5x sharp',
  },
  {
    id: 'W5',
    title: '12 MP JPEG -> remove-metadata (lossless)',
    endpoint: '/api/v1/remove-metadata',
    fields: {},
    // sharp has no lossless metadata strip: its way to drop metadata is to decode and re-encode.
    sharpLabel: 'jpeg({quality:90}) re-encode (sharp has no lossless strip)',
    sharp: (input) => sharp(input).jpeg({ quality: 90 }),
    reference: same,
    target: '< 20 ms wall time (HTTP call)',
  },
  {
    id: 'W6',
    title: '1 MP JPEG -> resize 400 px wide -> WebP q80',
    megapixels: 1,
    endpoint: '/api/v1/resize',
    fields: { width: '400', format: 'webp', quality: '80' },
    sharpLabel: 'resize(400).webp({quality:80})',
    sharp: (input) => sharp(input).resize(400).webp({ quality: 80 }),
    reference: (source) => rawOut(fromRaw(source).resize(400, Math.round((source.height * 400) / source.width), { kernel: 'lanczos3', fit: 'fill' })),
    target: '<= 1.5x sharp',
  },
  {
    id: 'W8',
    title: '12 MP JPEG -> WebP q80, full size',
    endpoint: '/api/v1/convert',
    fields: { format: 'webp', quality: '80' },
    sharpLabel: 'webp({quality:80})',
    sharp: (input) => sharp(input).webp({ quality: 80 }),
    reference: same,
    target: '<= 1.0x sharp',
  },
  {
    id: 'W9',
    title: '12 MP PNG -> JPEG q80',
    inputName: 'png-12mp.png',
    endpoint: '/api/v1/convert',
    fields: { format: 'jpg', quality: '80' },
    sharpLabel: 'jpeg({quality:80})',
    sharp: (input) => sharp(input).jpeg({ quality: 80 }),
    reference: same,
    target: '<= 2x sharp',
  },
  {
    id: 'W10',
    title: '12 MP JPEG -> PNG',
    endpoint: '/api/v1/convert',
    fields: { format: 'png' },
    sharpLabel: 'png() (sharp defaults: compression level 6, adaptive filtering)',
    sharp: (input) => sharp(input).png(),
    reference: same,
    target: '<= 1.5x sharp, bytes <= sharp',
  },
  {
    id: 'W11',
    title: '24 MP JPEG -> 400x400 thumbnail, fit=cover position=attention -> WebP q80',
    megapixels: 24,
    endpoint: '/api/v1/resize',
    fields: { width: '400', height: '400', fit: 'cover', position: 'attention', format: 'webp', quality: '80' },
    sharpLabel: "resize(400, 400, {fit:'cover', position:'attention'}).webp({quality:80})",
    sharp: (input) => sharp(input).resize(400, 400, { fit: 'cover', position: 'attention' }).webp({ quality: 80 }),
    // sharp's own thumbnail, uncompressed: how close the kept region and its pixels are to sharp's.
    reference: () => rawOut(sharp(path.join(PHOTOS_DIR, PHOTO[24])).resize(400, 400, { fit: 'cover', position: 'attention' }).removeAlpha()),
    target: '<= 1.5x sharp',
  },
];

/** The memory workloads: W1-W5 with the 12 or 24 MP photo (crop at the same place). */
export function memoryFields(id: TimedWorkload['id']): { endpoint: string; fields: Record<string, string> } {
  const w = TIMED_WORKLOADS.find((x) => x.id === id)!;
  return { endpoint: w.endpoint, fields: w.fields };
}

/** W6: the 1 MP photo resized to 400 px wide WebP (q80, the default), under load. */
export const W6 = { endpoint: '/api/v1/resize', fields: { width: '400', format: 'webp' }, file: PHOTO[1] } as const;
