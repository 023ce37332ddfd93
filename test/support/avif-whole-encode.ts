// Workers have no threads: the single-threaded encoder build is the one that runs there.
import avifEncoder from '@jsquash/avif/codec/enc/avif_enc.js';
import encoderWasm from '@jsquash/avif/codec/enc/avif_enc.wasm';
import { defaultOptions } from '@jsquash/avif/meta.js';
import { jsquashCodec, type EmscriptenEncoder } from './jsquash';
import { avifSpeedFor } from '../../src/image/formats/avif/encode-tile';
import type { RgbaImage } from '../../src/image/types';

const encoder = jsquashCodec<EmscriptenEncoder<typeof defaultOptions>>(avifEncoder, encoderWasm);

/**
 * One whole image encoded by jSquash's AVIF encoder as a single item: what results looked like
 * before grids (src/image/formats/avif/encode.ts encodes tiles with the same encoder and settings); tests compare with it.
 */
export async function encodeWholeAvif(image: RgbaImage, quality: number): Promise<Uint8Array> {
  const speed = avifSpeedFor(image.width * image.height);
  const bytes = await encoder.run((avif) => avif.encode(image.data, image.width, image.height, { ...defaultOptions, quality, speed }));
  if (!bytes) throw new Error('AVIF encoder returned no file');
  return new Uint8Array(bytes);
}
