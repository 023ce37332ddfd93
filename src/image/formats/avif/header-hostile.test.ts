import { describe, expect, it } from 'vitest';
import { box, fullBox, text, u16, u32 } from '../../../../test/support/byte-builders';
import { AppError } from '../../../errors';
import { readDimensions } from '../../../../test/support/formats';

/**
 * Small AVIF files built to make the header check itself expensive (found in review): the check
 * must answer quickly, with the project's own error or a size, never a RangeError or a long stall.
 */
const ftyp = box('ftyp', text('avif'), u32(0), text('avifmif1miaf'));
const hdlr = fullBox('hdlr', 0, 0, u32(0), text('pict'), new Array(12).fill(0), [0]);
const pitm = fullBox('pitm', 0, 0, u16(1));
const ispe = fullBox('ispe', 0, 0, u32(64), u32(64));

function avif({ iinf, iloc, ipco, ipma, iref = [], mdat = [] }: { iinf: number[]; iloc: number[]; ipco: number[][]; ipma: number[]; iref?: number[]; mdat?: ArrayLike<number> }) {
  const meta = fullBox('meta', 0, 0, hdlr, pitm, iinf, iloc, iref, box('iprp', box('ipco', ...ipco), ipma));
  return new Uint8Array([...ftyp, ...meta, ...box('mdat', mdat)]);
}

const infe = (id: number, type: string) => fullBox('infe', 2, 0, u16(id), u16(0), text(type), [0]);
const iinf = (...entries: number[][]) => fullBox('iinf', 0, 0, u16(entries.length), ...entries);
/** ipma v0: each item gets the given 1-based property indices. */
const ipma = (entries: [number, number[]][]) =>
  fullBox('ipma', 0, 0, u32(entries.length), ...entries.map(([id, indices]) => [...u16(id), indices.length, ...indices]));

function expectQuickOutcome(file: Uint8Array): void {
  const started = performance.now();
  try {
    readDimensions('avif', file);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
  }
  expect(performance.now() - started).toBeLessThan(3000);
}

describe('AVIF header check against files that make the check expensive', () => {
  it('65,535 zero-width iloc extents (each "the whole file") over 2 MB are not joined', () => {
    const extents = 65_535;
    // iloc v0, offset/length/base sizes 0: every extent is offset 0, length 0 (= to the end).
    const iloc = fullBox('iloc', 0, 0, [0x00, 0x00], u16(1), u16(1), u16(0), u16(extents));
    expectQuickOutcome(avif({ iinf: iinf(infe(1, 'av01')), iloc, ipco: [ispe], ipma: ipma([[1, [1]]]), mdat: new Uint8Array(2 << 20) }));
  });

  it('a 500 KB auxC property is compared, not spread into a string', () => {
    const auxC = fullBox('auxC', 0, 0, new Array(500_000).fill(0x61), [0]);
    const iloc = fullBox('iloc', 0, 0, [0x44, 0x00], u16(2), u16(1), u16(0), u16(1), u32(0), u32(16), u16(2), u16(0), u16(1), u32(0), u32(16));
    const file = avif({ iinf: iinf(infe(2, 'av01'), infe(1, 'av01')), iloc, ipco: [ispe, auxC], ipma: ipma([[1, [1]], [2, [1, 2]]]) });
    expectQuickOutcome(file);
  });

  it('60,000 dimg references from one item are collected in linear time', () => {
    const dimg = box('dimg', u16(1), u16(1), u16(2));
    const iref = fullBox('iref', 0, 0, ...new Array<number[]>(60_000).fill(dimg));
    const iloc = fullBox('iloc', 0, 0, [0x44, 0x00], u16(1), u16(1), u16(0), u16(1), u32(0), u32(8));
    expectQuickOutcome(avif({ iinf: iinf(infe(1, 'grid'), infe(2, 'av01')), iloc, ipco: [ispe], ipma: ipma([[1, [1]], [2, [1]]]), iref }));
  });
});
