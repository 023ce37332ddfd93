import decodeWithJsquash, { init as initJsquashDecoder } from '@jsquash/png/decode';
import encodeWithJsquash, { init as initJsquashEncoder } from '@jsquash/png/encode';
import pngWasm from '@jsquash/png/codec/pkg/squoosh_png_bg.wasm?module';
import { describe, expect, it } from 'vitest';
import { corpus, PNGSUITE, sameBytes } from '../../../test/support/image-testing';
import type { RgbaImage } from '../types';
import { pngCodec } from './png';
import { createSquooshPng } from './vendor/squoosh-png.js';
import { liveCodecMemoryBytes, takeCodecMemoryBytes } from './wasm-memory';

const MB = 1024 * 1024;
const SIZE = 3000;

/**
 * What the vendored glue replaced: jSquash's own, whose single instance keeps all it grew. Its
 * decoder is started first, as png.ts did; the encoder's init then finds that instance.
 */
const jsquash = (initJsquashDecoder as unknown as (module: WebAssembly.Module) => Promise<{ memory: WebAssembly.Memory }>)(pngWasm).then(() =>
  initJsquashEncoder(),
);
async function jsquashMemoryBytes(): Promise<number> {
  return (await jsquash).memory.buffer.byteLength;
}

async function jsquashDecode(bytes: Uint8Array): Promise<RgbaImage> {
  await jsquash;
  const image = await decodeWithJsquash(bytes.slice().buffer);
  return { data: image.data, width: image.width, height: image.height };
}

/** What a just-made instance holds: where the PNG codec must be back after any job. */
const freshBytes = createSquooshPng(pngWasm).memory.buffer.byteLength;

/** Deterministic noise (xorshift32) in every channel, alpha too: incompressible, so the encoder's buffers are as large as they get. */
function noise(width: number, height: number): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  const words = new Uint32Array(data.buffer);
  let x = 0x9e3779b9;
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    words[i] = x;
  }
  return { data, width, height };
}

const large = noise(SIZE, SIZE);
let largePng: Promise<Uint8Array> | undefined;
const encodeLarge = () => (largePng ??= pngCodec.encode(large, 100));

describe('PNG codec (vendored wasm-bindgen glue, one instance per factory call)', () => {
  it('starts each instance with a small memory of its own', () => {
    const a = createSquooshPng(pngWasm);
    const b = createSquooshPng(pngWasm);
    expect(a.memory).not.toBe(b.memory);
    expect(freshBytes).toBeLessThan(4 * MB);
  });

  it('encodes a 3000x3000 image byte-identically to @jsquash/png/encode, then holds no instance', async () => {
    const ours = await encodeLarge();
    expect(liveCodecMemoryBytes()).toBe(0);

    const theirs = new Uint8Array(
      await encodeWithJsquash({ data: new Uint8ClampedArray(large.data.slice().buffer), width: SIZE, height: SIZE }),
    );
    expect(ours.length).toBe(theirs.length);
    expect(sameBytes(ours, theirs)).toBe(true);
    // jSquash's instance keeps what the same encode grew, for the isolate's lifetime.
    expect(await jsquashMemoryBytes()).toBeGreaterThan(100 * MB);
  }, 120_000);

  it('decodes the 3000x3000 image to its pixels, like @jsquash/png/decode, then holds no instance', async () => {
    const png = await encodeLarge();
    const ours = await pngCodec.decode(png);
    expect(liveCodecMemoryBytes()).toBe(0);
    expect([ours.width, ours.height]).toEqual([SIZE, SIZE]);
    expect(sameBytes(ours.data, large.data)).toBe(true);

    const theirs = await jsquashDecode(png);
    expect(sameBytes(ours.data, theirs.data)).toBe(true);
  }, 120_000);

  it('reports the peak of an instance it dropped, once', async () => {
    takeCodecMemoryBytes();
    await pngCodec.encode(noise(64, 64), 100);
    expect(liveCodecMemoryBytes()).toBe(0);
    expect(takeCodecMemoryBytes()).toBeGreaterThanOrEqual(freshBytes);
    expect(takeCodecMemoryBytes()).toBe(0);
  });

  it('decodes every valid PngSuite file to the same pixels as @jsquash/png/decode', async () => {
    const valid = PNGSUITE.filter((path) => !/\/x[^/]*\.png$/.test(path));
    expect(valid.length).toBeGreaterThan(150);
    for (const path of valid) {
      const input = await corpus(path);
      const [ours, theirs] = [await pngCodec.decode(input), await jsquashDecode(input)];
      expect([ours.width, ours.height], path).toEqual([theirs.width, theirs.height]);
      expect(ours.data.length, path).toBe(theirs.width * theirs.height * 4);
      expect(sameBytes(ours.data, theirs.data), path).toBe(true);
    }
  });

  it('fails cleanly on the corrupt PngSuite files, as @jsquash/png/decode does, and the next decode works', async () => {
    const corrupt = PNGSUITE.filter((path) => /\/x[^/]*\.png$/.test(path));
    const good = await corpus('png/pngsuite/basn6a16.png');
    const expected = await jsquashDecode(good);
    let refused = 0;
    for (const path of corrupt) {
      const input = await corpus(path);
      const theirs = await jsquashDecode(input).then(
        (image) => image,
        (error: unknown) => error,
      );
      if (theirs instanceof Error) {
        await expect(pngCodec.decode(input), path).rejects.toThrow(Error);
        // The failed instance is dropped: nothing is held until the next call makes a fresh one.
        expect(liveCodecMemoryBytes(), path).toBe(0);
        refused++;
      } else {
        // Some damage (e.g. a bad CRC) only the pipeline's own checks refuse; then both decoders agree.
        const ours = await pngCodec.decode(input);
        expect(sameBytes(ours.data, (theirs as RgbaImage).data), path).toBe(true);
      }
      const next = await pngCodec.decode(good);
      expect(sameBytes(next.data, expected.data), path).toBe(true);
    }
    expect(refused).toBeGreaterThan(corrupt.length / 2);
  });
});
