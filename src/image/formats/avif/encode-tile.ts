// Workers have no threads: the single-threaded encoder build is the one that runs there.
import avifEncoderFactory from '@jsquash/avif/codec/enc/avif_enc.js';
import encoderWasm from '@jsquash/avif/codec/enc/avif_enc.wasm';
import { defaultOptions } from '@jsquash/avif/meta.js';
import { openEmscripten, type EmscriptenEncoder } from '../../codecs/codec';
import { parseAvifContainer } from './container';
import { findProperty } from './properties';

/** One AV1 still image: its bitstream (sequence header first) and its `av1C` body. */
export interface EncodedAv1 {
  data: Uint8Array;
  config: Uint8Array;
}

/**
 * jSquash's AVIF encoder (libavif 1.0.1 over libaom 3.7.0, all-intra) used once per tile on one
 * instance: each call writes a small AVIF file, from which the AV1 data and `av1C` are taken. The
 * instance's memory is counted from open until `release()` (codecs/wasm-memory.ts).
 */
export interface TileEncoder {
  /** Colour of an RGBA tile, 4:2:0 (alpha is ignored: the caller passes it opaque). */
  encodeColor(rgba: Uint8Array, width: number, height: number): EncodedAv1;
  /**
   * An alpha plane, given as RGBA grey (R = G = B = alpha, A = 255): coded monochrome, where the
   * BT.601 luma of a grey is that grey, full range, so the AV1 luma is the alpha as libavif's own
   * alpha items store it.
   */
  encodeAlpha(grey: Uint8Array, width: number, height: number): EncodedAv1;
  release(): void;
}

export interface TileEncoderOptions {
  /** 1..100, libavif's quality (the quantizer mapping of today's whole-image encodes). */
  quality: number;
  /** libaom cpu-used, 0..10. */
  speed: number;
}

const SUBSAMPLE_420 = 1;
const SUBSAMPLE_400 = 0;

export async function openTileEncoder({ quality, speed }: TileEncoderOptions): Promise<TileEncoder> {
  const codec = await openEmscripten<EmscriptenEncoder<typeof defaultOptions>>(avifEncoderFactory, encoderWasm);
  const encode = (pixels: Uint8Array, width: number, height: number, subsample: number): EncodedAv1 => {
    const file = quietly(() => codec.instance.encode(pixels, width, height, { ...defaultOptions, quality, speed, subsample }));
    if (!file) throw new Error(`AVIF encoder returned no file for a ${width}x${height} tile`);
    return primaryAv1(file);
  };
  return {
    encodeColor: (rgba, width, height) => encode(rgba, width, height, SUBSAMPLE_420),
    encodeAlpha: (grey, width, height) => encode(grey, width, height, SUBSAMPLE_400),
    release: () => codec.release(),
  };
}

/**
 * jSquash's encoder logs "AVIF result is ok" through console.log after every encode, which would
 * be one log line per tile; the call is synchronous, so the logger is swapped out only during it.
 */
function quietly<T>(call: () => T): T {
  const log = console.log;
  console.log = () => {};
  try {
    return call();
  } finally {
    console.log = log;
  }
}

/** The primary `av01` item of a libavif file: its data and its av1C body. */
export function primaryAv1(file: Uint8Array): EncodedAv1 {
  const { color, properties } = parseAvifContainer(file);
  const av1C = findProperty(properties, 'av1C');
  const [range] = color.tiles[0].ranges;
  if (color.grid || color.tiles[0].ranges.length !== 1 || !av1C) throw new Error('AVIF encoder output has no single-extent primary av01 item');
  return { data: file.slice(range.start, range.end), config: file.slice(av1C.body, av1C.end) };
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
