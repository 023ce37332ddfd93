import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { box, fullBox, text, u16, u32 } from '../../../../test/support/byte-builders';
import { AVIFS, corpus, expectAppError, mutated, prefixLengths, resultOrAppError } from '../../../../test/support/image-testing';
import { assertWithinPixelLimit } from '../../limits';
import { openDecode, readDimensions, verifiedAvif } from '../../../../test/support/formats';

const ftyp = box('ftyp', text('avif'), u32(0), text('mif1avifmiaf'));
const hdlr = fullBox('hdlr', 0, 0, u32(0), text('pict'), u32(0), u32(0), u32(0), [0]);
const ispe = (width: number, height: number) => fullBox('ispe', 0, 0, u32(width), u32(height));
/** An av1C for 8-bit 4:2:0 with no configOBUs. */
const av1C = box('av1C', [0x81, 0x00, 0x0c, 0x00]);
const pitm = (id: number, version = 0) => fullBox('pitm', version, 0, version === 0 ? u16(id) : u32(id));
/** ipma version 0, 8-bit indices: [itemId, [property indices]] entries. */
const ipma = (...entries: [number, number[]][]) =>
  fullBox('ipma', 0, 0, u32(entries.length), ...entries.map(([id, indices]) => [...u16(id), indices.length, ...indices]));
const file = (...topLevel: number[][]) => new Uint8Array([...ftyp, ...topLevel.flat()]);
const still = (...metaChildren: number[][]) => file(fullBox('meta', 0, 0, hdlr, ...metaChildren), box('mdat', [1, 2, 3]));

/** A reduced still-picture AV1 sequence header OBU whose max frame size is width x height (8-bit 4:2:0). */
function av1SequenceHeader(width: number, height: number): number[] {
  const size = (width - 1).toString(2).padStart(16, '0') + (height - 1).toString(2).padStart(16, '0');
  // Then no tools, and color_config: 8-bit, not mono, no description, limited range, csp 0; no film grain.
  const bits = '00011' + '00000' + '1111' + '1111' + size + '000000' + '0000' + '00' + '00';
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

/**
 * An avis file without meta: one track per [width, height] (sample entry size, with an av1C), each
 * with one sample holding an AV1 sequence header of `av1` (default: the entry size), in one mdat.
 */
function sequence(...tracks: ([number, number] | [number, number, [number, number]])[]): Uint8Array {
  const samples = tracks.map(([width, height, av1]) => av1SequenceHeader(...(av1 ?? [width, height])));
  const build = (mdatData: number) => {
    let at = mdatData;
    const traks = tracks.map(([width, height], i) => {
      const entry = box('av01', new Array(24).fill(0), u16(width), u16(height), new Array(50).fill(0), av1C);
      const stbl = box('stbl', fullBox('stsd', 0, 0, u32(1), entry), fullBox('stsz', 0, 0, u32(samples[i].length), u32(1)), fullBox('stco', 0, 0, u32(1), u32(at)));
      at += samples[i].length;
      return box('trak', fullBox('tkhd', 0, 0, u32(0), u32(0), u32(i + 1), new Array(72).fill(0)), box('mdia', box('minf', stbl)));
    });
    return [...box('ftyp', text('avis'), u32(0), text('avismsf1')), ...box('moov', ...traks)];
  };
  const head = build(0);
  return new Uint8Array([...build(head.length + 8), ...box('mdat', ...samples)]);
}

describe('readDimensions avif', () => {
  it('reads the size of every corpus AVIF, the size the decoder produces', { timeout: 60_000 }, async () => {
    for (const [path, [width, height]] of Object.entries(AVIFS)) {
      const bytes = await corpus(path);
      expect(readDimensions('avif', bytes), path).toEqual({ width, height });
      const source = await openDecode(bytes, { shrink: 1, region: null });
      source.close();
      expect({ width: source.width, height: source.height }, path).toEqual({ width, height });
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
    const dims = readDimensions('avif', still(pitm(1), ...av01Items([1], 50000, 50000), box('iprp', box('ipco', ispe(50000, 50000), av1C), ipma([1, [0x81, 2]]))));
    expect(dims).toEqual({ width: 50000, height: 50000 });
    expectAppError(() => assertWithinPixelLimit(dims, 40_000_000, 'input'), 'FILE_TOO_LARGE');
  });

  it('takes the ispe of a grid primary item, not its tiles', () => {
    // property 1: tile ispe; 2: grid ispe; 3: av1C; items 2-5 are tiles, item 1 is the grid
    const tiles: [number, number[]][] = [2, 3, 4, 5].map((id) => [id, [0x81, 3]]);
    const items = av01Items([2, 3, 4, 5], 512, 512, [[1, 'grid', gridData(2, 2, 1000, 900)]]);
    const meta = [pitm(1), ...items, dimg(1, [2, 3, 4, 5]), box('iprp', box('ipco', ispe(512, 512), ispe(1000, 900), av1C), ipma(...tiles, [1, [2]]))];
    expect(readDimensions('avif', still(...meta))).toEqual({ width: 1000, height: 900 });
  });

  it('takes the primary item ispe even when another item is larger', () => {
    const meta = [pitm(2), ...av01Items([1, 2]), box('iprp', box('ipco', ispe(4000, 3000), ispe(160, 120), av1C), ipma([1, [1, 3]], [2, [0x82, 3]]))];
    expect(readDimensions('avif', still(...meta))).toEqual({ width: 160, height: 120 });
  });

  it('reads ipma version 1 with 16-bit indices and pitm version 1', () => {
    const ipmaV1 = fullBox('ipma', 1, 1, u32(2), [...u32(70000), 1, ...u16(1)], [...u32(70001), 3, ...u16(0x8003), ...u16(2), ...u16(4)]);
    const ipco = box('ipco', ispe(1000, 1000), box('pixi', [0, 1, 8]), ispe(300, 200), av1C);
    const obu = av1SequenceHeader(300, 200);
    const items = [fullBox('iinf', 0, 0, u16(1), fullBox('infe', 3, 0, u32(70001), u16(0), text('av01'), [0])), fullBox('iloc', 2, 0, [0x44, 0x00], u32(1), [...u32(70001), 0, 1, ...u16(0), ...u16(1), ...u32(0), ...u32(obu.length)]), box('idat', obu)];
    expect(readDimensions('avif', still(pitm(70001, 1), ...items, box('iprp', ipco, ipmaV1)))).toEqual({ width: 300, height: 200 });
  });

  it('refuses a primary item whose size cannot be resolved, as the decoder would', () => {
    const ipco = box('ipco', ispe(64, 64), av1C);
    const items = av01Items([1]);
    const cases: [Uint8Array, RegExp][] = [
      [still(...items, box('iprp', ipco, ipma([1, [1, 2]]))), /no primary item/],
      [still(pitm(9), ...items, box('iprp', ipco, ipma([1, [1, 2]]))), /primary item 9 is not declared/],
      [still(pitm(1), ...items, box('iprp', ipco, ipma([1, [7]]))), /ipma index 7 past the 2 properties/],
      [still(pitm(1), ...items, box('iprp', ipco, fullBox('ipma', 0, 0, u32(5), [0, 1, 1]))), /ipma is truncated/],
      [still(pitm(1), ...items, box('iprp', ipco)), /item 1 has no ispe/],
      [still(pitm(1), iinf([1, 'av01']), box('iprp', ipco, ipma([1, [1, 2]]))), /item 1 has no location/],
    ];
    for (const [input, reason] of cases) expect(String(expectAppError(() => readDimensions('avif', input), 'UNSUPPORTED_FORMAT').detail)).toMatch(reason);
  });

  it('handles 64-bit box sizes before meta', () => {
    const largeMdat = [...u32(1), ...text('mdat'), ...u32(0), ...u32(20), 9, 9, 9, 9];
    const meta = fullBox('meta', 0, 0, hdlr, pitm(1), ...av01Items([1]), box('iprp', box('ipco', ispe(33, 44), av1C), ipma([1, [1, 2]])));
    expect(readDimensions('avif', file(largeMdat, meta))).toEqual({ width: 33, height: 44 });
  });

  it('reads an AVIF sequence without meta from its first av01 track', () => {
    expect(readDimensions('avif', sequence([640, 360], [1280, 720]))).toEqual({ width: 640, height: 360 });
  });

  it('refuses an AV1 stream larger than the declared size; verifyAvifContainer also one that cannot fill it', () => {
    const ipco = (...children: number[][]) => box('iprp', box('ipco', ispe(64, 64), av1C, ...children), ipma([1, [1, 2]]));
    expect(verifiedAvif(still(pitm(1), ...av01Items([1], 64, 64), ipco())).size).toEqual({ width: 64, height: 64 });
    const liars: [string, Uint8Array, RegExp][] = [
      ['data', still(pitm(1), ...av01Items([1], 65, 64), ipco()), /image 1 data AV1 max frame 65x64 is larger than its ispe 64x64/],
      ['track sample', sequence([640, 360, [641, 360]]), /image 1 data AV1 max frame 641x360 is larger than its sample entry 640x360/],
      ['no sequence header', still(pitm(1), iinf([1, 'av01']), ilocInIdat([1, 0, 2]), box('idat', [0x12, 0]), ipco()), /no AV1 sequence header/],
      ['frame first', still(pitm(1), iinf([1, 'av01']), ilocInIdat([1, 0, 3]), box('idat', [0x32, 1, 0]), ipco()), /frame before any sequence header/],
    ];
    for (const [label, input, detail] of liars) {
      expect(String(expectAppError(() => readDimensions('avif', input), 'UNSUPPORTED_FORMAT').detail), label).toMatch(detail);
      expect(String(expectAppError(() => verifiedAvif(input), 'UNSUPPORTED_FORMAT').detail), label).toMatch(detail);
    }
    const smaller = still(pitm(1), ...av01Items([1], 64, 60), ipco());
    expect(readDimensions('avif', smaller), 'a smaller stream passes the header: the pixel limit comes first').toEqual({ width: 64, height: 64 });
    expect(String(expectAppError(() => verifiedAvif(smaller), 'UNSUPPORTED_FORMAT').detail)).toMatch(/AV1 max frame 64x60 is smaller than its ispe 64x64/);
  });

  it('refuses zero sizes, missing ispe and damaged boxes', () => {
    const rejected = [
      still(pitm(1), ...av01Items([1]), box('iprp', box('ipco', ispe(0, 10), av1C), ipma([1, [1, 2]]))),
      still(pitm(1), ...av01Items([1]), box('iprp', box('ipco', box('pixi', [0]), av1C), ipma([1, [1, 2]]))),
      still(pitm(1)),
      file(box('free', [])),
      new Uint8Array([...box('moov', []), ...ftyp]), // ftyp not first
      new Uint8Array([...ftyp, ...u32(4000), ...text('meta'), 0, 0, 0, 0]), // meta past the end
      new Uint8Array([...ftyp, ...u32(3), ...text('meta')]), // size smaller than its header
      still(pitm(1), ...av01Items([1]), box('iprp', box('ipco', fullBox('ispe', 0, 0, u32(5)), av1C), ipma([1, [1, 2]]))), // short ispe
      new Uint8Array(ftyp.slice(0, 6)),
    ];
    for (const input of rejected) expectAppError(() => readDimensions('avif', input), 'UNSUPPORTED_FORMAT');
  });

  it('only ever returns a size or throws UNSUPPORTED_FORMAT (random and mutated input)', async () => {
    const bytes = await corpus('avif/fox.profile0.8bpc.yuv420.avif');
    const synthetic = still(pitm(1), ...av01Items([1, 2]), box('iprp', box('ipco', ispe(64, 64), ispe(128, 96), av1C), ipma([1, [1, 3]], [2, [2, 3]])));
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
          resultOrAppError(() => verifiedAvif(input));
        },
      ),
      { numRuns: 300 },
    );
  });
});
