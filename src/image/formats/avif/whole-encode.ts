// Workers have no threads: the single-threaded encoder build is the one that runs there.
import avifEncoder from '@jsquash/avif/codec/enc/avif_enc.js';
import encoderWasm from '@jsquash/avif/codec/enc/avif_enc.wasm';
import { defaultOptions } from '@jsquash/avif/meta.js';
import type { RgbaImage } from '../../types';
import { emscriptenCodec, type EmscriptenEncoder } from '../../codecs/codec';

const encoder = emscriptenCodec<EmscriptenEncoder<typeof defaultOptions>>(avifEncoder, encoderWasm);

/**
 * One whole image encoded by jSquash's AVIF encoder as a single item: what results looked like
 * before grids (avif/encode.ts encodes tiles with the same encoder and settings); tests compare with it.
 */
export async function encodeWholeAvif(image: RgbaImage, quality: number): Promise<Uint8Array> {
  const speed = avifSpeedFor(image.width * image.height);
  const bytes = await encoder.run((avif) => avif.encode(image.data, image.width, image.height, { ...defaultOptions, quality, speed }));
  if (!bytes) throw new Error('AVIF encoder returned no file');
  return new Uint8Array(bytes);
}

/**
 * libaom's speed by image size: the slowest (best quality per byte) speed that keeps an encode
 * near 2.5 s. Measured with this encoder build at q80 on the 1 and 12 MP benchmark photos
 * (ms per megapixel): speed 7 about 1400, 8 about 700, 9 about 250. Speed 9 costs 5% more
 * bytes than 8 at the same PSNR (39.5 dB); speed 10 gives the same file as 9.
 */
const SPEED_BY_SIZE = [
  { upToPixels: 1_200_000, speed: 7 },
  { upToPixels: 3_500_000, speed: 8 },
  { upToPixels: Infinity, speed: 9 },
];

export function avifSpeedFor(pixels: number): number {
  return SPEED_BY_SIZE.find((step) => pixels <= step.upToPixels)!.speed;
}
