import { describe, expect, it } from 'vitest';
import { AppError } from '../../../errors';
import { alphaAuxC, av01Item, av1ItemOf, buildAvif, clap, gridData, ispe, nclx, pixi, type Av1Item, type ItemSpec } from '../../../../test/support/avif-builder';
import { box, fullBox, text } from '../../../../test/support/byte-builders';
import { AVIFS, corpus, expectAppError, fixture, fixtureList } from '../../../../test/support/image-testing';
import { parseAvifContainer } from './container';
import { readDimensions, verifiedAvif } from '../../../../test/support/formats';

const FOX = 'avif/fox.profile0.8bpc.yuv420.avif';
const fox = async (): Promise<Av1Item> => av1ItemOf(await corpus(FOX));

/** A grid item 1 over tiles 10, 11, ... of `tile`, output width x height. */
function grid(tile: Av1Item, rows: number, columns: number, width: number, height: number, options: { tiles?: ItemSpec[]; gridProperties?: Uint8Array[] } = {}) {
  const tiles = options.tiles ?? Array.from({ length: rows * columns }, (_, i) => av01Item(10 + i, tile));
  return buildAvif({
    primary: 1,
    items: [{ id: 1, type: 'grid', data: gridData(rows, columns, width, height), properties: options.gridProperties ?? [ispe(width, height)], inIdat: true }, ...tiles],
    references: [{ type: 'dimg', from: 1, to: tiles.map((t) => t.id) }],
  });
}

function detailOf(run: () => unknown): string {
  return String(expectAppError(run, 'UNSUPPORTED_FORMAT').detail);
}

describe('the AVIF container as the decoder reads it', () => {
  it('reads the size of every corpus AVIF and fixture: the primary item, a grid\'s output, a clean aperture', async () => {
    for (const [path, [width, height]] of Object.entries(AVIFS)) expect(readDimensions('avif', await corpus(path)), path).toEqual({ width, height });
    const expected: Record<string, [number, number]> = {
      'avif/clap-8bit-420.avif': [150, 100],
      'avif/screen-intrabc-8bit-444.avif': [512, 512],
      'animated/red-then-blue.avif': [32, 24],
      'alpha/alpha-8bit.avif': [96, 64],
    };
    for (const folder of ['avif', 'alpha', 'animated', 'cicp', 'colour']) {
      for (const path of (await fixtureList(folder)).filter((name) => name.endsWith('.avif'))) {
        const [width, height] = expected[path] ?? (folder === 'avif' ? [192, 128] : [96, 64]);
        expect(readDimensions('avif', await fixture(path)), path).toEqual({ width, height });
      }
    }
  });

  it('finds alpha (auxl + the alpha auxC), premultiplication (prem) and the nclx colr', async () => {
    const premultiplied = parseAvifContainer(await fixture('avif/premultiplied-8bit-alpha.avif'));
    expect([premultiplied.alpha !== null, premultiplied.premultiplied]).toEqual([true, true]);
    const alphaGrid = parseAvifContainer(await fixture('avif/grid-2x2-10bit-444-alpha.avif'));
    expect([alphaGrid.alpha?.grid, alphaGrid.premultiplied]).toEqual([{ rows: 2, columns: 2, tileWidth: 96, tileHeight: 64 }, false]);
    expect(parseAvifContainer(await fixture('avif/limited-bt709-8bit-420.avif')).nclx).toEqual({ primaries: 1, transfer: 13, matrix: 1, fullRange: false });

    const tile = await fox();
    const withAuxiliary = (urn: string) =>
      buildAvif({
        primary: 1,
        items: [av01Item(1, tile), av01Item(2, tile, [bytesOf(fullBox('auxC', 0, 0, text(urn), [0]))])],
        references: [{ type: 'auxl', from: 2, to: [1] }],
      });
    expect(parseAvifContainer(withAuxiliary('urn:mpeg:mpegB:cicp:systems:auxiliary:alpha')).alpha).not.toBeNull();
    expect(parseAvifContainer(withAuxiliary('urn:mpeg:hevc:2015:auxid:1')).alpha).not.toBeNull();
    expect(parseAvifContainer(withAuxiliary('urn:com:apple:photo:2020:aux:hdrgainmap')).alpha, 'another auxiliary image is not alpha').toBeNull();
  });

  it('applies a valid clean aperture and ignores an invalid one, as Chromium does', async () => {
    const tile = await fox(); // 1204 x 800
    const withClap = (box: Uint8Array) => parseAvifContainer(buildAvif({ primary: 1, items: [av01Item(1, tile, [box])] }));
    expect(withClap(clap([1000, 1], [600, 1], [0, 1], [0, 1])).crop).toEqual({ x: 102, y: 100, width: 1000, height: 600 });
    expect(withClap(clap([1000, 1], [600, 1], [-102, 1], [-100, 1])).crop).toEqual({ x: 0, y: 0, width: 1000, height: 600 });
    expect(withClap(clap([2000, 2], [1200, 2], [-204, 4], [-200, 4])).crop, 'fractions that come out whole').toEqual({ x: 51, y: 50, width: 1000, height: 600 });
    expect(withClap(clap([1203, 1], [799, 1], [-1, 2], [-1, 2])).crop, 'odd sizes from the top left corner').toEqual({ x: 0, y: 0, width: 1203, height: 799 });
    const invalid = [
      clap([1001, 2], [600, 1], [0, 1], [0, 1]), // width not whole
      clap([1000, 1], [600, 1], [1, 2], [0, 1]), // left edge not whole
      clap([1000, 1], [600, 1], [103, 1], [0, 1]), // reaches past the right edge
      clap([1000, 1], [600, 1], [-103, 1], [0, 1]), // starts left of the image
      clap([1000, 0], [600, 1], [0, 1], [0, 1]), // zero denominator
      clap([0, 1], [600, 1], [0, 1], [0, 1]), // empty
    ];
    for (const property of invalid) {
      const container = withClap(property);
      expect(container.crop).toBeNull();
      expect(container.size).toEqual({ width: 1204, height: 800 });
    }
  });

  it('reads grids whose last row and column reach past the output, and a lone tile padded past a small output', async () => {
    const tile = await fox();
    expect(parseAvifContainer(grid(tile, 2, 3, 3 * 1204 - 10, 2 * 800 - 6)).color.grid).toEqual({ rows: 2, columns: 3, tileWidth: 1204, tileHeight: 800 });
    expect(parseAvifContainer(grid(tile, 1, 1, 1000, 700)).size).toEqual({ width: 1000, height: 700 });
  });

  it('refuses grids that do not fit their tiles, with the reason', async () => {
    const tile = await fox();
    const small = av1ItemOf(await corpus('avif/fox.profile0.8bpc.yuv420.odd-width.odd-height.avif'));
    const cases: [Uint8Array, RegExp][] = [
      [grid(tile, 2, 2, 2408, 1600, { tiles: [10, 11, 12].map((id) => av01Item(id, tile)) }), /needs 4 tiles, has 3/],
      [grid(tile, 2, 2, 2409, 1600), /columns: 2 tiles of 1204 px do not match an output of 2409 px/],
      [grid(tile, 3, 2, 2408, 1600), /rows: 3 tiles of 800 px do not match an output of 1600 px/],
      [grid(tile, 1, 1, 500, 300), /do not match an output of 500 px/], // a lone tile far larger than the output
      [grid(tile, 1, 2, 2408, 800, { gridProperties: [ispe(2000, 800)] }), /output 2408x800 differs from its ispe 2000x800/],
      [grid(tile, 1, 2, 2408, 800, { tiles: [av01Item(10, tile), av01Item(11, small)] }), /tiles differ in size/],
      [grid(tile, 1, 2, 2408, 800, { tiles: [av01Item(10, tile), { id: 11, type: 'mime', data: tile.data, properties: [ispe(1204, 800)] }] }), /tile 11 is not an av01 item/],
    ];
    for (const [file, reason] of cases) expect(detailOf(() => parseAvifContainer(file))).toMatch(reason);
  });

  it('refuses items it cannot decode, naming what is missing or unsupported', async () => {
    const tile = await fox();
    const only = (item: ItemSpec) => buildAvif({ primary: 1, items: [item] });
    expect(detailOf(() => parseAvifContainer(only({ ...av01Item(1, tile), properties: [tile.av1C] })))).toMatch(/item 1 has no ispe/);
    expect(detailOf(() => parseAvifContainer(only({ ...av01Item(1, tile), properties: [ispe(1204, 800)] })))).toMatch(/item 1 has no av1C/);
    const heic = expectAppError(() => parseAvifContainer(only({ ...av01Item(1, tile), type: 'hvc1' })), 'UNSUPPORTED_FORMAT');
    expect(heic.message).toMatch(/not supported: an image item of type "hvc1"/);
    const essential = { ...av01Item(1, tile, [bytesOf(box('zzzz', [1]))]), essential: [false, false, true] };
    expect(expectAppError(() => parseAvifContainer(only(essential)), 'UNSUPPORTED_FORMAT').message).toMatch(/essential property of type "zzzz"/);
    expect(parseAvifContainer(only({ ...essential, essential: [true, true, false] })).size, 'an unknown property that is not essential is ignored').toEqual({ width: 1204, height: 800 });
    expect(parseAvifContainer(only({ ...av01Item(1, tile), inIdat: true })).size, 'data in idat').toEqual({ width: 1204, height: 800 });
    expect(detailOf(() => parseAvifContainer(buildAvif({ primary: 2, items: [av01Item(1, tile)] })))).toMatch(/primary item 2 is not declared/);
    expect(detailOf(() => parseAvifContainer(buildAvif({ primary: null, items: [av01Item(1, tile)] })))).toMatch(/no primary item and no image sequence/);
    expect(detailOf(() => parseAvifContainer(buildAvif({ primary: 1, items: [av01Item(1, tile), av01Item(1, tile)] })))).toMatch(/item 1 declared twice/);
  });

  it('refuses an alpha image of another size than the colour image', async () => {
    const tile = await fox();
    const small = av1ItemOf(await corpus('avif/fox.profile0.8bpc.yuv420.odd-width.odd-height.avif'));
    const file = buildAvif({ primary: 1, items: [av01Item(1, tile), av01Item(2, small, [alphaAuxC(), pixi(8)])], references: [{ type: 'auxl', from: 2, to: [1] }] });
    expect(detailOf(() => parseAvifContainer(file))).toMatch(/alpha 1203x799 differs from the image 1204x800/);
  });

  it('reads an image sequence without a primary item from its first av01 track', async () => {
    const sequence = await fixture('animated/red-then-blue.avif');
    const withoutMeta = sequence.slice();
    const meta = withoutMeta.findIndex((_, i) => text('meta').every((c, k) => withoutMeta[i + k] === c));
    withoutMeta.set(text('free'), meta); // same size: the tracks' chunk offsets stay right
    const container = parseAvifContainer(withoutMeta);
    expect([container.source, container.size, container.alpha !== null]).toEqual(['track', { width: 32, height: 24 }, true]);
    expect(parseAvifContainer(sequence).source, 'with a primary item, the item').toBe('item');
  });

  it('checks that every AV1 stream promises frames of its declared size', async () => {
    const tile = await fox();
    const lying = buildAvif({ primary: 1, items: [{ ...av01Item(1, tile), properties: [ispe(1204, 640), tile.av1C] }] });
    expect(parseAvifContainer(lying).size, 'the container alone cannot tell').toEqual({ width: 1204, height: 640 });
    expect(detailOf(() => verifiedAvif(lying))).toMatch(/AV1 max frame 1204x800 is larger than its ispe 1204x640/);
    const noHeader = buildAvif({ primary: 1, items: [{ ...av01Item(1, tile), data: new Uint8Array([0x12, 0x00]) }] });
    expect(detailOf(() => verifiedAvif(noHeader))).toMatch(/has no AV1 sequence header/);
  });

  it('only ever returns a container or throws AppError for truncated files', async () => {
    for (const path of [FOX, 'photos/photo-12mp.avif']) {
      const bytes = await corpus(path);
      for (let length = 0; length < Math.min(bytes.length, 1200); length += 7) {
        try {
          verifiedAvif(bytes.subarray(0, length));
        } catch (error) {
          expect(error, `${path} cut at ${length}`).toBeInstanceOf(AppError);
        }
      }
    }
  });
});

function bytesOf(parts: ArrayLike<number>): Uint8Array {
  return Uint8Array.from(parts);
}
