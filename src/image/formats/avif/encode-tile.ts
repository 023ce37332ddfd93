// Workers have no threads: the single-threaded encoder build is the one that runs there.
import avifEncoderFactory from '@jsquash/avif/codec/enc/avif_enc.js';
import encoderWasm from '@jsquash/avif/codec/enc/avif_enc.wasm';
import { defaultOptions } from '@jsquash/avif/meta.js';
import { u16be, u32be, u8 } from '../../bytes';
import { openEmscripten, type EmscriptenEncoder } from '../../codecs/codec';
import { findBox, primaryItemProperties, readPrimaryItemId } from './header';

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

/** The primary `av01` item of a libavif file: its one iloc extent and its av1C. */
export function primaryAv1(file: Uint8Array): EncodedAv1 {
  const meta = findBox(file, { body: 0, end: file.length }, 'meta');
  const primary = meta && readPrimaryItemId(file, meta);
  const av1C = primaryItemProperties(file)?.find((box) => box.type === 'av1C');
  if (!meta || primary === null || !av1C) throw new Error('AVIF encoder output has no primary av01 item');
  const [offset, length] = itemExtent(file, findBox(file, meta, 'iloc', 4), primary);
  return { data: file.slice(offset, offset + length), config: file.slice(av1C.body, av1C.end) };
}

/** The single extent of `itemId` in an iloc of version 0 or 1 (file offsets). */
function itemExtent(file: Uint8Array, iloc: { body: number; end: number } | null, itemId: number): [number, number] {
  if (!iloc) throw new Error('AVIF encoder output has no iloc');
  const b = file.subarray(0, iloc.end);
  const version = u8(b, iloc.body);
  const sizes = u16be(b, iloc.body + 4);
  const [offsetSize, lengthSize, baseSize, indexSize] = [sizes >> 12, (sizes >> 8) & 15, (sizes >> 4) & 15, version === 1 ? sizes & 15 : 0];
  let at = iloc.body + 6;
  const field = (size: number): number => {
    const value = size === 0 ? 0 : size === 4 ? u32be(b, at) : u32be(b, at) * 2 ** 32 + u32be(b, at + 4);
    at += size;
    return value;
  };
  const count = u16be(b, at);
  at += 2;
  for (let i = 0; i < count; i++) {
    const id = u16be(b, at);
    at += version === 1 ? 6 : 4; // item_ID, [construction_method,] data_reference_index
    const base = field(baseSize);
    const extents = u16be(b, at);
    at += 2;
    for (let e = 0; e < extents; e++) {
      field(indexSize);
      const offset = base + field(offsetSize);
      const length = field(lengthSize);
      if (id === itemId && extents === 1) return [offset, length];
    }
  }
  throw new Error(`AVIF encoder output has no single extent for item ${itemId}`);
}
