/**
 * Test helpers (imported by the *.test.ts files here only): jSquash's own mozjpeg, instantiated
 * for these tests alone (the reference the bands are compared with, independent of codecs/jpeg.ts),
 * band decoding and stacking, a synthetic picture.
 */
import decode, { init as initDecoder } from '@jsquash/jpeg/decode';
import encode, { init as initEncoder } from '@jsquash/jpeg/encode';
import decoderWasm from '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm';
import encoderWasm from '@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm';
import type { EncodeOptions } from '@jsquash/jpeg/meta';
import type { RgbaImage } from '../types';
import type { JpegBandPlan } from './bands';

// jSquash's typings omit init(module), the form Workers need (no fetching of .wasm URLs there).
type InitWithModule = (module: WebAssembly.Module) => Promise<void>;
let ready: Promise<unknown> | undefined;
const codecs = () => (ready ??= Promise.all([(initDecoder as unknown as InitWithModule)(decoderWasm), (initEncoder as unknown as InitWithModule)(encoderWasm)]));

// Corpus access and byte helpers are the suite's own.
export { corpus, fixture, mutated, sameBytes } from '../../../test/support/image-testing';

/** The project's encoder settings (src/image/codecs/jpeg.ts) at quality 80. */
export const BASELINE: Partial<EncodeOptions> = { quality: 80, baseline: true, progressive: false, optimize_coding: true };
export const SUBSAMPLING = {
  '4:2:0': { auto_subsample: false, chroma_subsample: 2 },
  '4:4:4': { auto_subsample: false, chroma_subsample: 1 },
  grey: { color_space: 1 },
  /** RGB without a colour transform: mozjpeg writes an Adobe APP14 marker with transform 0. */
  rgb: { color_space: 2, auto_subsample: false, chroma_subsample: 1 },
} satisfies Record<string, Partial<EncodeOptions>>;

export async function decodeRgba(bytes: Uint8Array): Promise<RgbaImage> {
  await codecs();
  const image = await decode(bytes.slice().buffer, { preserveOrientation: false });
  return { data: new Uint8Array(image.data.buffer, image.data.byteOffset, image.data.byteLength), width: image.width, height: image.height };
}

export async function encodeJpeg(image: RgbaImage, options: Partial<EncodeOptions>): Promise<Uint8Array> {
  await codecs();
  const data = new Uint8ClampedArray(image.data.slice().buffer);
  return new Uint8Array(await encode({ data, width: image.width, height: image.height, colorSpace: 'srgb' } as unknown as Parameters<typeof encode>[0], options));
}

/** Decodes every band and stacks the rows each delivers, as the pipeline will. */
export async function decodeBands(plan: JpegBandPlan): Promise<RgbaImage> {
  const { width, height } = plan;
  const data = new Uint8Array(width * height * 4);
  const rowBytes = width * 4;
  for (const band of plan.bands) {
    const image = await decodeRgba(band.jpeg());
    if (image.width !== width) throw new Error(`band at ${band.y} decodes ${image.width} wide, not ${width}`);
    if (image.height < band.skipRows + band.rows) throw new Error(`band at ${band.y} decodes ${image.height} rows, fewer than ${band.skipRows} + ${band.rows}`);
    data.set(image.data.subarray(band.skipRows * rowBytes, (band.skipRows + band.rows) * rowBytes), band.y * rowBytes);
  }
  return { data, width, height };
}

/** Rows [y, y + rows) of an image, in an array of their own. */
export function rowsOf(image: RgbaImage, y: number, rows: number): RgbaImage {
  const rowBytes = image.width * 4;
  return { data: image.data.slice(y * rowBytes, (y + rows) * rowBytes), width: image.width, height: rows };
}

/**
 * A picture whose chroma changes from row to row and pixel to pixel (so chroma upsampling across
 * band edges shows), with smooth areas, hard edges and noise.
 */
export function picture(width: number, height: number, seed = 1): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  let random = seed;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      random = (random * 1103515245 + 12345) >>> 0;
      const noise = (random >>> 24) & 31;
      const i = (y * width + x) * 4;
      const stripe = ((x >> 3) + (y >> 2)) & 1 ? 90 : 0;
      data[i] = (x * 255) / Math.max(1, width - 1) + noise;
      data[i + 1] = ((y * 7) & 255) ^ stripe;
      data[i + 2] = (128 + 100 * Math.sin((x + 2 * y) / 9)) | 0;
      data[i + 3] = 255;
    }
  }
  return { data, width, height };
}
