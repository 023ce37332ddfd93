import { describe, expect, it } from 'vitest';
import { corpus, fixture, fixtureList, referenceJpegEncode, sameBytes } from '../../../../test/support/image-testing';
import { openDecode } from '../../../../test/support/formats';
import { readJpegHeader } from './header';
import { type Band, type RowSource } from '../../stages/rows';
import { openJpegDecode } from './decode';
import { encodeJpeg, type JpegEncodeStats } from './encode';
import { decoderLibjpegBytes, encoderLibjpegBytes, jpegDecodeWasmBytes, jpegEncodeWasmBytes, packedValuesBound } from './memory';
import { collectFrame, readBands } from '../../../../test/support/row-sources';

const MiB = 1024 * 1024;

/** Decodes every band and returns the WebAssembly memory and libjpeg's peak at the end. */
async function decodeMemory(bytes: Uint8Array, shrink = 1): Promise<{ wasm: number; libjpeg: number }> {
  const source = await openJpegDecode(bytes, readJpegHeader(bytes).frame, { shrink, region: null });
  let band: Band | null = null;
  let measured = { wasm: 0, libjpeg: 0 };
  do {
    measured = { wasm: source.wasmBytes(), libjpeg: source.libjpegPeakBytes() };
    band = await source.read();
  } while (band);
  return measured;
}

/** Decodes every band (the decoder's low-memory mode or not): the pixels, the WebAssembly memory and libjpeg's peak. */
async function decodeWithMemory(bytes: Uint8Array, shrink: number, lowMemory: boolean): Promise<{ pixels: Uint8Array; wasm: number; libjpeg: number }> {
  const packed = lowMemory ? { maxBytes: packedValuesBound(readJpegHeader(bytes).frame, bytes.byteLength) } : undefined;
  const source = await openJpegDecode(bytes, readJpegHeader(bytes).frame, { shrink, region: null, lowMemory: packed });
  const pixels = new Uint8Array(source.width * source.height * 4);
  let wasm = 0;
  for (let band = await source.read(); band; band = await source.read()) {
    pixels.set(band.data.subarray(0, band.rows * source.width * 4), band.y * source.width * 4);
    wasm = Math.max(wasm, source.wasmBytes());
  }
  return { pixels, wasm, libjpeg: source.libjpegPeakBytes() };
}

/** A generated picture served in 16-row bands without ever holding it whole (gradients plus deterministic noise). */
function generatedSource(width: number, height: number): RowSource {
  let y = 0;
  let seed = 12345;
  const data = new Uint8Array(16 * width * 4);
  return {
    width,
    height,
    model: 'rgba',
    alpha: false,
    grey: false,
    async read() {
      if (y >= height) return null;
      const rows = Math.min(16, height - y);
      for (let row = 0; row < rows; row++) {
        for (let x = 0; x < width; x++) {
          seed = (seed * 1103515245 + 12345) >>> 0;
          const noise = (seed >>> 24) & 15;
          data.set([(x * 255) / width + noise, ((y + row) * 255) / height + noise, ((x + y + row) & 255) ^ noise, 255], (row * width + x) * 4);
        }
      }
      const band = { y, rows, data: data.subarray(0, rows * width * 4) };
      y += rows;
      return band;
    },
    heldBytes: () => data.byteLength,
    close() {},
  };
}

describe('libjpeg memory: bands, not frames', () => {
  it('decodes the 12 and 24 MP photos in 1 MiB of WebAssembly memory at every scale (a frame would be 48 and 96 MB)', async () => {
    for (const path of ['photos/photo-12mp.jpg', 'photos/photo-24mp.jpg']) {
      const bytes = await corpus(path);
      const frame = readJpegHeader(bytes).frame;
      for (const shrink of [1, 2, 4, 8]) {
        const { wasm } = await decodeMemory(bytes, shrink);
        expect(wasm, `${path} 1/${shrink}`).toBeLessThanOrEqual(jpegDecodeWasmBytes(frame, shrink));
        expect(wasm, `${path} 1/${shrink}`).toBeLessThanOrEqual(1.5 * MiB); // measured: 1 MiB, the initial memory
      }
    }
  }, 60_000);

  it('decodes a progressive 12 MP photo in its coefficient buffer (3 bytes a pixel) and little more', async () => {
    const photo = await collectFrame(await openDecode(await corpus('photos/photo-12mp.jpg')));
    const bytes = await referenceJpegEncode(photo, 90, true);
    const frame = readJpegHeader(bytes).frame;
    expect(frame.progressive).toBe(true);
    for (const shrink of [1, 8]) {
      const { wasm, libjpeg } = await decodeMemory(bytes, shrink);
      expect(wasm, `1/${shrink}`).toBeLessThanOrEqual(jpegDecodeWasmBytes(frame, shrink));
      expect(libjpeg, `1/${shrink}`).toBeGreaterThan(3 * 12_000_000); // the coefficients, also at 1/8
      expect(wasm, `1/${shrink}`).toBeLessThan(38 * MiB); // measured: 35.3 MiB at 1/1
    }
  }, 60_000);

  it('decodes it with its coefficients packed (the low-memory mode) to the same pixels in under half of that, within the packed bound', async () => {
    const photo = await collectFrame(await openDecode(await corpus('photos/photo-12mp.jpg')));
    for (const quality of [60, 85]) {
      const bytes = await referenceJpegEncode(photo, quality, true);
      const frame = readJpegHeader(bytes).frame;
      for (const shrink of [1, 4]) {
        const unpacked = await decodeWithMemory(bytes, shrink, false);
        const packed = await decodeWithMemory(bytes, shrink, true);
        const label = `q${quality} 1/${shrink}`;
        expect(sameBytes(packed.pixels, unpacked.pixels), label).toBe(true);
        expect(packed.libjpeg, label).toBeLessThan(unpacked.libjpeg / 2);
        expect(packed.libjpeg, label).toBeLessThanOrEqual(decoderLibjpegBytes(frame, shrink, packedValuesBound(readJpegHeader(bytes).frame, bytes.byteLength)));
        expect(packed.wasm, label).toBeLessThanOrEqual(jpegDecodeWasmBytes(frame, shrink, packedValuesBound(readJpegHeader(bytes).frame, bytes.byteLength)));
      }
      // Given less than its values need (the plan gives what the budget leaves), the decode fails cleanly.
      const tooLittle = { maxBytes: packedValuesBound(readJpegHeader(bytes).frame, bytes.byteLength) / 8 };
      const decodeAll = async () => readBands(await openJpegDecode(bytes, frame, { shrink: 1, region: null, lowMemory: tooLittle }));
      await expect(decodeAll()).rejects.toMatchObject({ code: 'CONVERSION_FAILED' });
    }
  }, 120_000);

  it('encodes 12 MP and a generated 24 MP picture in 1 MiB with standard tables; optimised tables add the coefficient buffer', async () => {
    for (const [width, height] of [[4000, 3000], [6000, 4000]]) {
      const stats: JpegEncodeStats = { libjpegPeakBytes: 0, wasmBytes: 0 };
      await encodeJpeg(generatedSource(width, height), { quality: 80, optimizeHuffman: false }, stats);
      expect(stats.wasmBytes, `${width}x${height}`).toBeLessThanOrEqual(jpegEncodeWasmBytes(width, height, 3, false));
      expect(stats.wasmBytes, `${width}x${height}`).toBeLessThanOrEqual(1.5 * MiB); // measured: 1 MiB
    }
    const stats: JpegEncodeStats = { libjpegPeakBytes: 0, wasmBytes: 0 };
    await encodeJpeg(generatedSource(4000, 3000), { quality: 80, optimizeHuffman: true }, stats);
    expect(stats.wasmBytes).toBeLessThanOrEqual(jpegEncodeWasmBytes(4000, 3000, 3, true));
    expect(stats.wasmBytes).toBeLessThan(38 * MiB); // measured: 35.3 MiB
  }, 60_000);
});

describe('libjpeg memory formulas: upper bounds of what libjpeg takes', () => {
  it('decoderLibjpegBytes covers every fixture and corpus photo at every scale', async () => {
    const files: [string, Uint8Array][] = [];
    for (const folder of ['jpeg', 'cmyk']) for (const path of await fixtureList(folder)) files.push([path, await fixture(path)]);
    for (const path of ['photos/photo-1mp.jpg', 'jpeg/camera/DSCN0010.jpg', 'jpeg/orientation/portrait_6.jpg']) files.push([path, await corpus(path)]);
    for (const [path, bytes] of files) {
      const frame = readJpegHeader(bytes).frame;
      for (const shrink of [1, 2, 4, 8]) {
        const { wasm, libjpeg } = await decodeMemory(bytes, shrink);
        expect(libjpeg, `${path} 1/${shrink}`).toBeLessThanOrEqual(decoderLibjpegBytes(frame, shrink));
        expect(wasm, `${path} 1/${shrink}`).toBeLessThanOrEqual(jpegDecodeWasmBytes(frame, shrink));
      }
    }
  }, 60_000);

  it('encoderLibjpegBytes covers colour and grey encodes of several sizes, with and without optimised tables', async () => {
    for (const [width, height] of [[1, 1], [64, 48], [203, 157], [1000, 1000], [2001, 999]]) {
      for (const grey of [false, true]) {
        for (const optimizeHuffman of [false, true]) {
          const stats: JpegEncodeStats = { libjpegPeakBytes: 0, wasmBytes: 0 };
          const source = { ...generatedSource(width, height), grey };
          await encodeJpeg(source, { quality: 80, optimizeHuffman }, stats);
          const what = `${width}x${height} grey ${grey} optimised ${optimizeHuffman}`;
          expect(stats.libjpegPeakBytes, what).toBeLessThanOrEqual(encoderLibjpegBytes(width, height, grey ? 1 : 3, optimizeHuffman));
          expect(stats.wasmBytes, what).toBeLessThanOrEqual(jpegEncodeWasmBytes(width, height, grey ? 1 : 3, optimizeHuffman));
        }
      }
    }
  }, 60_000);
});
