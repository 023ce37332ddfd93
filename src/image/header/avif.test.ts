import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import decodeAvifWasm, { init as initAvif } from '@jsquash/avif/decode';
// @ts-ignore: wasm module import, resolved by the workers test pool
import avifWasm from '@jsquash/avif/codec/dec/avif_dec.wasm';
import { assertWithinPixelLimit } from '../limits';
import { box, fullBox, text, u16, u32 } from '../../../test/support/byte-builders';
import { AVIFS, corpus, expectAppError, mutated, prefixLengths, resultOrAppError } from '../../../test/support/image-testing';
import { readDimensions } from '../formats';


const ftyp = box('ftyp', text('avif'), u32(0), text('mif1avifmiaf'));
const hdlr = fullBox('hdlr', 0, 0, u32(0), text('pict'), u32(0), u32(0), u32(0), [0]);
const ispe = (width: number, height: number) => fullBox('ispe', 0, 0, u32(width), u32(height));
const pitm = (id: number, version = 0) => fullBox('pitm', version, 0, version === 0 ? u16(id) : u32(id));
/** ipma version 0, 8-bit indices: [itemId, [property indices]] entries. */
const ipma = (...entries: [number, number[]][]) =>
  fullBox('ipma', 0, 0, u32(entries.length), ...entries.map(([id, indices]) => [...u16(id), indices.length, ...indices]));
const file = (...topLevel: number[][]) => new Uint8Array([...ftyp, ...topLevel.flat()]);
const still = (...metaChildren: number[][]) => file(fullBox('meta', 0, 0, hdlr, ...metaChildren), box('mdat', [1, 2, 3]));

/** A reduced still-picture AV1 sequence header OBU whose max frame size is width x height. */
function av1SequenceHeader(width: number, height: number): number[] {
  const bits = '00011' + '00000' + '1111' + '1111' + (width - 1).toString(2).padStart(16, '0') + (height - 1).toString(2).padStart(16, '0');
  const payload = (bits + '0'.repeat(7)).match(/.{8}/g)!.map((byte) => parseInt(byte, 2));
  return [0x0a, payload.length, ...payload];
}
const iinf = (...items: [number, string][]) =>
  fullBox('iinf', 0, 0, u16(items.length), ...items.map(([id, type]) => fullBox('infe', 2, 0, u16(id), u16(0), text(type), [0])));
/** iloc version 1, every item in idat (construction method 1) at [offset, length]. */
const ilocInIdat = (...items: [number, number, number][]) =>
  fullBox('iloc', 1, 0, [0x44, 0x00], u16(items.length), ...items.map(([id, offset, length]) => [...u16(id), 0, 1, ...u16(0), ...u16(1), ...u32(offset), ...u32(length)]));
/** iinf, iloc and idat for `av01` items sharing one AV1 stream of width x height, then `extra` items' data. */
function av01Items(ids: number[], width = 1, height = 1, extra: [number, string, number[]][] = []): number[][] {
  const obu = av1SequenceHeader(width, height);
  let at = obu.length;
  const extraLocations = extra.map(([id, , data]): [number, number, number] => [id, (at += data.length) - data.length, data.length]);
  return [
    iinf(...ids.map((id): [number, string] => [id, 'av01']), ...extra.map(([id, type]): [number, string] => [id, type])),
    ilocInIdat(...ids.map((id): [number, number, number] => [id, 0, obu.length]), ...extraLocations),
    box('idat', obu, ...extra.map(([, , data]) => data)),
  ];
}
const dimg = (from: number, to: number[]) => fullBox('iref', 0, 0, box('dimg', u16(from), u16(to.length), ...to.map(u16)));
const gridData = (rows: number, columns: number, width: number, height: number) => [0, 0, rows - 1, columns - 1, ...u16(width), ...u16(height)];
const auxC = (urn: string) => fullBox('auxC', 0, 0, text(urn), [0]);

/**
 * An avis file without meta: one track per [width, height] (sample entry size), each with one sample
 * holding an AV1 sequence header of `av1` (default: the entry size), all in one mdat after moov.
 */
function sequence(...tracks: ([number, number] | [number, number, [number, number]])[]): Uint8Array {
  const samples = tracks.map(([width, height, av1]) => av1SequenceHeader(...(av1 ?? [width, height])));
  const build = (mdatData: number) => {
    let at = mdatData;
    const traks = tracks.map(([width, height], i) => {
      const entry = box('av01', new Array(24).fill(0), u16(width), u16(height), new Array(50).fill(0));
      const stbl = box('stbl', fullBox('stsd', 0, 0, u32(1), entry), fullBox('stsz', 0, 0, u32(samples[i].length), u32(1)), fullBox('stco', 0, 0, u32(1), u32(at)));
      at += samples[i].length;
      return box('trak', box('tkhd', new Array(84).fill(0)), box('mdia', box('minf', stbl)));
    });
    return [...box('ftyp', text('avis'), u32(0), text('avismsf1')), ...box('moov', ...traks)];
  };
  const head = build(0);
  return new Uint8Array([...build(head.length + 8), ...box('mdat', ...samples)]);
}

let avifReady: Promise<void> | undefined;
async function decodeAvif(bytes: Uint8Array) {
  avifReady ??= initAvif(avifWasm as never);
  await avifReady;
  return decodeAvifWasm(bytes.slice().buffer);
}

describe('readDimensions avif', () => {
  it('reads the size of every corpus AVIF, matching what the decoder produces', { timeout: 30_000 }, async () => {
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
    const dims = readDimensions('avif', still(pitm(1), ...av01Items([1]), box('iprp', box('ipco', ispe(50000, 50000)), ipma([1, [0x81]]))));
    expect(dims).toEqual({ width: 50000, height: 50000 });
    expectAppError(() => assertWithinPixelLimit(dims, 40_000_000, 'input'), 'FILE_TOO_LARGE');
  });

  it('takes the ispe of a grid primary item, not its tiles', () => {
    // property 1: tile ispe; property 2: grid ispe; items 2-5 are tiles, item 1 is the grid
    const tiles: [number, number[]][] = [2, 3, 4, 5].map((id) => [id, [0x81]]);
    const items = av01Items([2, 3, 4, 5], 512, 512, [[1, 'grid', gridData(2, 2, 1000, 900)]]);
    const meta = [pitm(1), ...items, dimg(1, [2, 3, 4, 5]), box('iprp', box('ipco', ispe(512, 512), ispe(1000, 900)), ipma(...tiles, [1, [2]]))];
    expect(readDimensions('avif', still(...meta))).toEqual({ width: 1000, height: 900 });
  });

  it('takes the primary item ispe even when another item is larger', () => {
    const meta = [pitm(2), ...av01Items([1, 2]), box('iprp', box('ipco', ispe(4000, 3000), ispe(160, 120)), ipma([1, [1]], [2, [0x82]]))];
    expect(readDimensions('avif', still(...meta))).toEqual({ width: 160, height: 120 });
  });

  it('reads ipma version 1 with 16-bit indices and pitm version 1', () => {
    const ipmaV1 = fullBox('ipma', 1, 1, u32(2), [...u32(70000), 1, ...u16(1)], [...u32(70001), 2, ...u16(0x8003), ...u16(2)]);
    const ipco = box('ipco', ispe(1000, 1000), box('pixi', [0, 1, 8]), ispe(300, 200)); // the largest is not the primary
    expect(readDimensions('avif', still(pitm(70001, 1), ...av01Items([1]), box('iprp', ipco, ipmaV1)))).toEqual({ width: 300, height: 200 });
  });

  it('falls back to the largest ispe when the primary association cannot be resolved', () => {
    const ipco = box('ipco', ispe(64, 64), ispe(2000, 1000), ispe(100, 100));
    const items = av01Items([1]);
    const cases = [
      still(...items, box('iprp', ipco, ipma([1, [1]]))), // no pitm
      still(pitm(9), ...items, box('iprp', ipco, ipma([1, [1]]))), // primary not in ipma
      still(pitm(1), ...items, box('iprp', ipco, ipma([1, [7]]))), // index past ipco
      still(pitm(1), ...items, box('iprp', ipco, fullBox('ipma', 0, 0, u32(5), [0, 1, 1]))), // truncated ipma
      still(pitm(1), ...items, box('iprp', ipco)), // no ipma
    ];
    for (const input of cases) expect(readDimensions('avif', input)).toEqual({ width: 2000, height: 1000 });
  });

  it('handles 64-bit box sizes before meta', () => {
    const largeMdat = [...u32(1), ...text('mdat'), ...u32(0), ...u32(20), 9, 9, 9, 9];
    const meta = fullBox('meta', 0, 0, hdlr, pitm(1), ...av01Items([1]), box('iprp', box('ipco', ispe(33, 44)), ipma([1, [1]])));
    expect(readDimensions('avif', file(largeMdat, meta))).toEqual({ width: 33, height: 44 });
  });

  it('reads an AVIF sequence without meta from its av01 sample entries', () => {
    expect(readDimensions('avif', sequence([640, 360], [1280, 720]))).toEqual({ width: 1280, height: 720 });
  });

  it('refuses an AV1 stream, av1C or track larger than the declared size', () => {
    const ipco = (...children: number[][]) => box('iprp', box('ipco', ispe(64, 64), ...children), ipma([1, [1, 2]]));
    expect(readDimensions('avif', still(pitm(1), ...av01Items([1], 64, 64), ipco()))).toEqual({ width: 64, height: 64 });
    const liars: [string, Uint8Array, RegExp][] = [
      ['data', still(pitm(1), ...av01Items([1], 65, 64), ipco()), /item 1 data AV1 max frame 65x64 is larger than its ispe 64x64/],
      ['av1C', still(pitm(1), ...av01Items([1], 64, 64), ipco(box('av1C', [0x81, 0, 0, 0], av1SequenceHeader(64, 4000)))), /item 1 av1C AV1 max frame 64x4000/],
      ['track sample', sequence([640, 360, [641, 360]]), /track first sample AV1 max frame 641x360 is larger than its sample entry 640x360/],
      ['no sequence header', still(pitm(1), iinf([1, 'av01']), ilocInIdat([1, 0, 2]), box('idat', [0x12, 0]), ipco()), /no AV1 sequence header/],
      ['frame first', still(pitm(1), iinf([1, 'av01']), ilocInIdat([1, 0, 3]), box('idat', [0x32, 1, 0]), ipco()), /frame before any sequence header/],
      ['no location', still(pitm(1), iinf([1, 'av01']), ipco()), /item 1 has no location/],
      ['no items', still(pitm(1), ipco()), /no av01 image item or track/],
    ];
    for (const [label, input, detail] of liars) {
      const error = expectAppError(() => readDimensions('avif', input), 'UNSUPPORTED_FORMAT');
      expect(String(error.detail), label).toMatch(detail);
    }
  });

  it('refuses a grid inconsistent with its tiles and an alpha image larger than the primary', () => {
    const grid = (rows: number, columns: number, output: [number, number], tile: [number, number], tiles = rows * columns) => {
      const ids = Array.from({ length: tiles }, (_, i) => i + 2);
      const properties = box('ipco', ispe(...tile), ispe(1000, 1000));
      return still(pitm(1), ...av01Items(ids, ...tile, [[1, 'grid', gridData(rows, columns, ...output)]]), dimg(1, ids), box('iprp', properties, ipma(...ids.map((id): [number, number[]] => [id, [1]]), [1, [2]])));
    };
    expect(readDimensions('avif', grid(2, 2, [1000, 1000], [512, 512]))).toEqual({ width: 1000, height: 1000 });
    const rejected: [Uint8Array, RegExp][] = [
      [grid(2, 2, [1000, 1000], [512, 512], 3), /needs 4 tiles, has 3/],
      [grid(2, 2, [1000, 1000], [400, 512]), /does not match its output/], // does not cover
      [grid(3, 3, [1000, 1000], [512, 512]), /does not match its output/], // last row and column outside
      [grid(1, 1, [1000, 1000], [4000, 4000]), /does not match its output/], // one tile larger than the image
      [grid(2, 2, [1024, 1024], [512, 512]), /output 1024x1024 does not fit its ispe 1000x1000/],
    ];
    for (const [input, detail] of rejected) expect(String(expectAppError(() => readDimensions('avif', input), 'UNSUPPORTED_FORMAT').detail)).toMatch(detail);

    const alpha = (width: number, height: number) =>
      still(pitm(1), ...av01Items([1, 2]), box('iprp', box('ipco', ispe(64, 64), ispe(width, height), auxC('urn:mpeg:mpegB:cicp:systems:auxiliary:alpha')), ipma([1, [1]], [2, [2, 3]])));
    expect(readDimensions('avif', alpha(64, 64))).toEqual({ width: 64, height: 64 });
    expect(String(expectAppError(() => readDimensions('avif', alpha(64, 3000)), 'UNSUPPORTED_FORMAT').detail)).toMatch(/alpha item 2 ispe 64x3000 is larger than the image 64x64/);
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
