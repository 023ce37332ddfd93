import { describe, expect, it } from 'vitest';
import { corpus, opaqueNoise } from '../../../test/support/image-testing';
import { openJpegDecode } from '../formats/jpeg/decode';
import { readJpegHeader } from '../formats/jpeg/header';
import { openLibjpeg } from '../formats/jpeg/libjpeg';
import { encodeJpeg } from '../formats/jpeg/encode';
import { bandsOf } from '../../../test/support/row-sources';
import { codecMemoryPool, MemoryPool } from './memory-pool';
import { liveCodecMemoryBytes } from './wasm-memory';

const MiB = 2 ** 20;

/** Decodes every band; the memory the decoder used is read before its last band closes it. */
async function decode(bytes: Uint8Array) {
  const source = await openJpegDecode(bytes, readJpegHeader(bytes).frame, { shrink: 1, region: null });
  const data = new Uint8Array(source.width * source.height * 4);
  let wasmBytes = 0;
  for (let band = await source.read(); band; band = await source.read()) {
    wasmBytes = source.wasmBytes();
    data.set(band.data.subarray(0, band.rows * source.width * 4), band.y * source.width * 4);
  }
  source.close();
  return { data, wasmBytes };
}

const allZero = (memory: WebAssembly.Memory) => new Uint8Array(memory.buffer).every((byte) => byte === 0);

describe('warm codec memories', () => {
  it('hands the next instance in a role the memory the last one left, all zeros, with the same results', async () => {
    codecMemoryPool.drain();
    const photo = await corpus('photos/photo-1mp.jpg');
    const first = await decode(photo);
    const left = codecMemoryPool.take('jpeg-decoder');
    expect(left).toBeDefined();
    expect(allZero(left!)).toBe(true);
    codecMemoryPool.give('jpeg-decoder', left!, 0);

    const again = await decode(photo);
    expect(again.data).toEqual(first.data);
    expect(again.wasmBytes).toBe(first.wasmBytes);
    expect(codecMemoryPool.take('jpeg-decoder')).toBe(left);
  });

  it('counts what a small job uses of a larger warm memory, as a new memory would have grown', async () => {
    codecMemoryPool.drain();
    const large = await encodeJpeg(bandsOf(opaqueNoise(1500, 1000), [1000], false), { quality: 80, optimizeHuffman: true });
    expect(large.length).toBeGreaterThan(0);
    const warm = codecMemoryPool.take('jpeg-encoder')!;
    expect(warm.buffer.byteLength).toBeGreaterThan(4 * MiB);
    codecMemoryPool.give('jpeg-encoder', warm, 0);

    let returned = 0;
    codecMemoryPool.onReturn(() => returned++);
    const wasm = await openLibjpeg('jpeg-encoder', {});
    expect(wasm.memory).toBe(warm);
    expect(wasm.usedBytes()).toBeLessThan(2 * MiB);
    expect(liveCodecMemoryBytes()).toBe(wasm.usedBytes());
    // The rest of the warm memory is still resident: the admission counts it beside the runs.
    expect(codecMemoryPool.lentExcessBytes).toBe(warm.buffer.byteLength - wasm.usedBytes());
    wasm.release();
    expect(liveCodecMemoryBytes()).toBe(0);
    expect(codecMemoryPool.lentExcessBytes).toBe(0);
    expect(returned).toBe(1);
    expect(allZero(codecMemoryPool.take('jpeg-encoder')!)).toBe(true);
  });

  it('keeps one memory per role within its limit, and lets all go when drained', () => {
    const pool = new MemoryPool(3 * MiB);
    const memory = (mib: number) => new WebAssembly.Memory({ initial: mib * 16 });
    const big = memory(4);
    pool.give('a', big, 0);
    expect(pool.idleBytes).toBe(0);
    const [one, two, three] = [memory(1), memory(2), memory(1)];
    new Uint8Array(one.buffer).fill(7);
    pool.give('a', one, MiB);
    expect(allZero(one)).toBe(true);
    pool.give('b', two, 0);
    expect(pool.idleBytes).toBe(3 * MiB);
    pool.give('c', three, 0);
    expect(pool.idleBytes).toBe(2 * MiB);
    expect(pool.take('b')).toBeUndefined();
    expect(pool.take('a')).toBe(one);
    pool.drain();
    expect(pool.idleBytes).toBe(0);
    expect(pool.take('c')).toBeUndefined();
  });
});
