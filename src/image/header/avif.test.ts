import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import decodeAvifWasm, { init as initAvif } from '@jsquash/avif/decode';
// @ts-ignore: wasm module import, resolved by the workers test pool
import avifWasm from '@jsquash/avif/codec/dec/avif_dec.wasm';
import { assertWithinPixelLimit } from '../limits';
import { AVIFS, corpus, expectAppError, mutated, prefixLengths, resultOrAppError } from '../../../test/support/image-testing';
import { readDimensions } from '../formats';

const u32 = (v: number) => [v >>> 24, (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff];
const u16 = (v: number) => [v >> 8, v & 0xff];
const text = (s: string) => [...s].map((c) => c.charCodeAt(0));
const box = (type: string, ...content: number[][]) => {
  const body = content.flat();
  return [...u32(8 + body.length), ...text(type), ...body];
};
const fullBox = (type: string, version: number, flags: number, ...content: number[][]) =>
  box(type, [version, (flags >> 16) & 0xff, (flags >> 8) & 0xff, flags & 0xff], ...content);

const ftyp = box('ftyp', text('avif'), u32(0), text('mif1avifmiaf'));
const hdlr = fullBox('hdlr', 0, 0, u32(0), text('pict'), u32(0), u32(0), u32(0), [0]);
const ispe = (width: number, height: number) => fullBox('ispe', 0, 0, u32(width), u32(height));
const pitm = (id: number, version = 0) => fullBox('pitm', version, 0, version === 0 ? u16(id) : u32(id));
/** ipma version 0, 8-bit indices: [itemId, [property indices]] entries. */
const ipma = (...entries: [number, number[]][]) =>
  fullBox('ipma', 0, 0, u32(entries.length), ...entries.map(([id, indices]) => [...u16(id), indices.length, ...indices]));
const file = (...topLevel: number[][]) => new Uint8Array([...ftyp, ...topLevel.flat()]);
const still = (...metaChildren: number[][]) => file(fullBox('meta', 0, 0, hdlr, ...metaChildren), box('mdat', [1, 2, 3]));

let avifReady: Promise<void> | undefined;
async function decodeAvif(bytes: Uint8Array) {
  avifReady ??= initAvif(avifWasm as never);
  await avifReady;
  return decodeAvifWasm(bytes.slice().buffer);
}

describe('readDimensions avif', () => {
  it('reads the size of every corpus AVIF, matching what the decoder produces', async () => {
    for (const [path, [width, height]] of Object.entries(AVIFS)) {
      const bytes = await corpus(path);
      expect(readDimensions('avif', bytes), path).toEqual({ width, height });
      if (path.startsWith('avif/')) {
        const image = await decodeAvif(bytes);
        expect({ width: image!.width, height: image!.height }, path).toEqual({ width, height });
      }
    }
  });

  it('gives the full size or UNSUPPORTED_FORMAT for every prefix', async () => {
    for (const path of Object.keys(AVIFS)) {
      const bytes = await corpus(path);
      for (const n of prefixLengths(bytes.length, 1024, 16)) {
        const dims = resultOrAppError(() => readDimensions('avif', bytes.subarray(0, n)));
        if (dims) expect(dims, `${path} prefix ${n}`).toEqual({ width: AVIFS[path][0], height: AVIFS[path][1] });
      }
    }
  });

  it('reads a 50000x50000 ispe exactly, so the limit check rejects it', () => {
    const dims = readDimensions('avif', still(pitm(1), box('iprp', box('ipco', ispe(50000, 50000)), ipma([1, [0x81]]))));
    expect(dims).toEqual({ width: 50000, height: 50000 });
    expectAppError(() => assertWithinPixelLimit(dims, 40_000_000, 'input'), 'FILE_TOO_LARGE');
  });

  it('takes the ispe of a grid primary item, not its tiles', () => {
    // property 1: tile ispe; property 2: grid ispe; items 2-5 are tiles, item 1 is the grid
    const tiles: [number, number[]][] = [2, 3, 4, 5].map((id) => [id, [0x81]]);
    const meta = [pitm(1), box('iprp', box('ipco', ispe(512, 512), ispe(9000, 7000)), ipma(...tiles, [1, [2]]))];
    expect(readDimensions('avif', still(...meta))).toEqual({ width: 9000, height: 7000 });
  });

  it('takes the primary item ispe even when another item is larger', () => {
    const meta = [pitm(2), box('iprp', box('ipco', ispe(4000, 3000), ispe(160, 120)), ipma([1, [1]], [2, [0x82]]))];
    expect(readDimensions('avif', still(...meta))).toEqual({ width: 160, height: 120 });
  });

  it('reads ipma version 1 with 16-bit indices and pitm version 1', () => {
    const ipmaV1 = fullBox('ipma', 1, 1, u32(2), [...u32(70000), 1, ...u16(1)], [...u32(70001), 2, ...u16(0x8003), ...u16(2)]);
    const ipco = box('ipco', ispe(1000, 1000), box('pixi', [0, 1, 8]), ispe(300, 200)); // the largest is not the primary
    expect(readDimensions('avif', still(pitm(70001, 1), box('iprp', ipco, ipmaV1)))).toEqual({ width: 300, height: 200 });
  });

  it('falls back to the largest ispe when the primary association cannot be resolved', () => {
    const ipco = box('ipco', ispe(64, 64), ispe(2000, 1000), ispe(100, 100));
    const cases = [
      still(box('iprp', ipco, ipma([1, [1]]))), // no pitm
      still(pitm(9), box('iprp', ipco, ipma([1, [1]]))), // primary not in ipma
      still(pitm(1), box('iprp', ipco, ipma([1, [7]]))), // index past ipco
      still(pitm(1), box('iprp', ipco, fullBox('ipma', 0, 0, u32(5), [0, 1, 1]))), // truncated ipma
      still(pitm(1), box('iprp', ipco)), // no ipma
    ];
    for (const input of cases) expect(readDimensions('avif', input)).toEqual({ width: 2000, height: 1000 });
  });

  it('handles 64-bit box sizes before meta', () => {
    const largeMdat = [...u32(1), ...text('mdat'), ...u32(0), ...u32(20), 9, 9, 9, 9];
    const meta = fullBox('meta', 0, 0, hdlr, pitm(1), box('iprp', box('ipco', ispe(33, 44)), ipma([1, [1]])));
    expect(readDimensions('avif', file(largeMdat, meta))).toEqual({ width: 33, height: 44 });
  });

  it('reads an AVIF sequence without meta from its av01 sample entries', () => {
    const av01 = (width: number, height: number) => box('av01', new Array(24).fill(0), u16(width), u16(height), new Array(50).fill(0));
    const trak = (width: number, height: number) =>
      box('trak', box('tkhd', new Array(84).fill(0)), box('mdia', box('minf', box('stbl', fullBox('stsd', 0, 0, u32(1), av01(width, height))))));
    const sequence = new Uint8Array([...box('ftyp', text('avis'), u32(0), text('avismsf1')), ...box('moov', trak(640, 360), trak(1280, 720))]);
    expect(readDimensions('avif', sequence)).toEqual({ width: 1280, height: 720 });
  });

  it('rejects zero sizes, missing ispe and damaged boxes', () => {
    const rejected = [
      still(pitm(1), box('iprp', box('ipco', ispe(0, 10)), ipma([1, [1]]))),
      still(pitm(1), box('iprp', box('ipco', box('pixi', [0])), ipma([1, [1]]))),
      still(pitm(1)),
      file(box('free', [])),
      new Uint8Array([...box('moov', []), ...ftyp]), // ftyp not first
      new Uint8Array([...ftyp, ...u32(4000), ...text('meta'), 0, 0, 0, 0]), // meta past the end
      new Uint8Array([...ftyp, ...u32(3), ...text('meta')]), // size smaller than its header
      still(pitm(1), box('iprp', box('ipco', fullBox('ispe', 0, 0, u32(5))), ipma([1, [1]]))), // short ispe
      new Uint8Array(ftyp.slice(0, 6)),
    ];
    for (const input of rejected) expectAppError(() => readDimensions('avif', input), 'UNSUPPORTED_FORMAT');
  });

  it('only ever returns a size or throws UNSUPPORTED_FORMAT (random and mutated input)', async () => {
    const bytes = await corpus('avif/fox.profile0.8bpc.yuv420.avif');
    const synthetic = still(pitm(1), box('iprp', box('ipco', ispe(64, 64), ispe(128, 96)), ipma([1, [1]], [2, [2]])));
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 96 }).map((tail) => new Uint8Array([...ftyp, ...tail])),
          mutated(bytes, 330),
          mutated(synthetic, synthetic.length),
        ),
        (input) => {
          const dims = resultOrAppError(() => readDimensions('avif', input));
          if (dims) expect(dims.width > 0 && dims.height > 0).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
