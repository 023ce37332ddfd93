import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors';
import { AVIF_LIMITS } from '../../src/image/formats/avif/limits';
import { concat } from '../../src/image/bytes';
import { av01Item, av1ItemOf, buildAvif, gridData, ispe } from '../support/avif-builder';
import { box, fullBox, text, u16, u32 } from '../support/byte-builders';
import { openDecode, stripped, readDimensions, verifiedAvif } from '../support/formats';

/**
 * Files that declare more structure than any camera or encoder writes (the hardening issue: 65,000
 * to 200,000 unreferenced av01 items took libavif 7.5 s to 154 s). Every path that reads an AVIF
 * (the header, the decoder, the lossless strip) must refuse them with UNSUPPORTED_FORMAT and a
 * message that says why, in well under a second. The bound asserted is generous (1.5 s on a busy
 * machine); the measured times are printed. In Node, because workerd's clock does not advance while
 * code runs without I/O.
 */
const BOUND_MS = 1500;

const bytes = (parts: ArrayLike<number>) => Uint8Array.from(parts);
const ftyp = bytes(box('ftyp', text('avif'), u32(0), text('avifmif1miaf')));
const hdlr = bytes(fullBox('hdlr', 0, 0, u32(0), text('pict'), new Array(12).fill(0), [0]));
const pitm = bytes(fullBox('pitm', 0, 0, u16(1)));

function wrap(type: string, parts: Uint8Array[], fullBoxHeader = false): Uint8Array {
  const body = concat(fullBoxHeader ? [new Uint8Array(4), ...parts] : parts);
  return concat([bytes([...u32(8 + body.length), ...text(type)]), body]);
}

/**
 * `count` av01 items nobody references, as the files had them: an infe, an iloc entry (one
 * extent) and an ipma association each, over one small mdat.
 */
function unreferencedItems(count: number): Uint8Array {
  // 32-bit item ids and counts throughout: iinf v1, infe v3, iloc v2, ipma v1.
  const infe = (id: number) => bytes(fullBox('infe', 3, 0, u32(id), u16(0), text('av01'), [0]));
  const iinf = wrap('iinf', [bytes([1, 0, 0, 0, ...u32(count)]), ...Array.from({ length: count }, (_, i) => infe(i + 1))]);
  const ilocEntries = Array.from({ length: count }, (_, i) => bytes([...u32(i + 1), ...u16(0), ...u16(0), ...u16(1), ...u32(0), ...u32(16)]));
  const iloc = wrap('iloc', [bytes([2, 0, 0, 0, 0x44, 0x00, ...u32(count)]), ...ilocEntries]);
  const ipmaEntries = Array.from({ length: count }, (_, i) => bytes([...u32(i + 1), 1, 0x81]));
  const iprp = wrap('iprp', [wrap('ipco', [ispe(64, 64)]), wrap('ipma', [bytes([1, 0, 0, 0, ...u32(count)]), ...ipmaEntries])]);
  return concat([ftyp, wrap('meta', [hdlr, pitm, iinf, iloc, iprp], true), wrap('mdat', [new Uint8Array(16)])]);
}

interface Outcome {
  message: string;
  milliseconds: number;
}

/** Runs every path that reads an AVIF on `file`: each must refuse it quickly; returns the slowest. */
async function refusedEverywhere(file: Uint8Array, why: RegExp): Promise<Outcome> {
  let slowest = 0;
  let message = '';
  const paths: [string, () => unknown][] = [
    ['readAvifDimensions', () => readDimensions('avif', file)],
    ['verifyAvifContainer', () => verifiedAvif(file)],
    ['stripAvif', () => stripped('avif', file)],
    ['avifDecoder.open', () => openDecode(file, { shrink: 1, region: null })],
  ];
  for (const [name, run] of paths) {
    const started = performance.now();
    let error: unknown = null;
    try {
      await run();
    } catch (thrown) {
      error = thrown;
    }
    const milliseconds = performance.now() - started;
    expect(error, name).toBeInstanceOf(AppError);
    expect((error as AppError).code, name).toBe('UNSUPPORTED_FORMAT');
    expect((error as AppError).message, name).toMatch(why);
    expect(milliseconds, `${name} took ${milliseconds.toFixed(0)} ms`).toBeLessThan(BOUND_MS);
    slowest = Math.max(slowest, milliseconds);
    message = (error as AppError).message;
  }
  return { message, milliseconds: slowest };
}

describe('AVIF files that declare absurd amounts of structure', () => {
  it.each([65_000, 100_000, 200_000])('%i unreferenced av01 items are refused in well under a second', async (count) => {
    const file = unreferencedItems(count);
    const outcome = await refusedEverywhere(file, /declares [\d,]+ items; at most 1,000 are accepted \(no camera or encoder makes such files\)/);
    console.log(`${count} items (${(file.length / 2 ** 20).toFixed(1)} MiB): refused by every path, slowest ${outcome.milliseconds.toFixed(1)} ms: ${outcome.message}`);
  });

  it('counts entries as they are read, not as they are declared', async () => {
    // iinf declares 5 entries and holds 200,000.
    const count = 200_000;
    const infe = bytes(fullBox('infe', 2, 0, u16(1), u16(0), text('av01'), [0]));
    const iinf = wrap('iinf', [bytes(u16(5)), ...new Array<Uint8Array>(count).fill(infe)], true);
    await refusedEverywhere(concat([ftyp, wrap('meta', [hdlr, pitm, iinf], true)]), /more than 1,000 boxes in one iinf; at most 1,000 are accepted/);
  });

  it('bounds extents, properties, associations, references and children per box', async () => {
    const tile = av1ItemOf(new Uint8Array(readFileSync(path.resolve(import.meta.dirname, '../../../shared/corpus/avif/fox.profile0.8bpc.yuv420.avif'))));
    const item = av01Item(1, tile);
    const extents = (count: number) => {
      const entry = bytes([...u16(1), ...u16(0), ...u16(count), ...new Array(count).fill([...u32(0), ...u32(1)]).flat()]);
      return concat([ftyp, wrap('meta', [hdlr, pitm, wrap('iinf', [bytes(u16(1)), bytes(fullBox('infe', 2, 0, u16(1), u16(0), text('av01'), [0]))], true), wrap('iloc', [bytes([0x44, 0x00, ...u16(1)]), entry], true)], true)]);
    };
    const properties = buildAvif({ primary: 1, items: [{ ...item, properties: [...item.properties!, ...new Array(AVIF_LIMITS.properties).fill(ispe(1, 1))] }] });
    const references = buildAvif({ primary: 1, items: [item], references: Array.from({ length: AVIF_LIMITS.references + 1 }, (_, i) => ({ type: 'cdsc', from: i + 2, to: [1] })) });
    const referenceList = buildAvif({ primary: 1, items: [item], references: [{ type: 'dimg', from: 1, to: Array.from({ length: 5000 }, (_, i) => i + 2) }] });
    const metaChildren = concat([ftyp, wrap('meta', [hdlr, pitm, ...new Array(AVIF_LIMITS.childrenPerBox).fill(wrap('free', []))], true)]);
    const topLevel = concat([ftyp, ...new Array(10_000).fill(wrap('free', []))]);
    const ipma = concat([ftyp, wrap('meta', [hdlr, pitm, wrap('iprp', [wrap('ipco', [ispe(1, 1)]), wrap('ipma', [bytes(u32(70_000)), ...new Array(70_000).fill(bytes([...u16(9), 0]))], true)])], true)]);
    // 496 grid tiles, every one reading the whole 2 MB mdat ("length 0": to the end of the file).
    const wholeFile = (() => {
      const tiles = Array.from({ length: 496 }, (_, i) => ({ ...av01Item(10 + i, tile), data: new Uint8Array(0) }));
      const [width, height] = [31 * tile.width - 10, 16 * tile.height - 6];
      const grid = { id: 1, type: 'grid', data: gridData(16, 31, width, height), properties: [ispe(width, height)], inIdat: true };
      return concat([buildAvif({ primary: 1, items: [grid, ...tiles], references: [{ type: 'dimg', from: 1, to: tiles.map((t) => t.id) }] }), new Uint8Array(2 << 20)]);
    })();
    const cases: [string, Uint8Array, RegExp][] = [
      ['33 extents', extents(AVIF_LIMITS.extentsPerItem + 1), /33 extents for item 1; at most 32/],
      ['1,002 properties', properties, /more than 1,000 boxes in one ipco; at most 1,000/],
      ['1,001 reference boxes', references, /more than 1,000 boxes in one iref; at most 1,000/],
      ['5,000 references in one box', referenceList, /5,000 references from item 1; at most 1,000/],
      ['101 boxes in meta', metaChildren, /more than 100 boxes in one meta; at most 100/],
      ['10,000 top-level boxes', topLevel, /more than 100 boxes in one file; at most 100/],
      ['70,000 ipma entries', ipma, /70,000 property associations; at most 1,000/],
      ['496 tiles reading a 2 MiB file each', wholeFile, /declares [\d,]+ bytes of image data in a file of [\d,]+ bytes; at most [\d,]+ are accepted/],
    ];
    for (const [name, file, why] of cases) {
      const outcome = await refusedEverywhere(file, why);
      console.log(`${name}: slowest ${outcome.milliseconds.toFixed(1)} ms`);
    }
  });
});
