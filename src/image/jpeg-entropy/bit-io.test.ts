import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BitReader, EntropyError } from './bit-reader';
import { BitWriter } from './bit-writer';

describe('BitWriter', () => {
  it('stuffs a 0x00 after every 0xFF byte and pads the last byte with 1 bits', () => {
    const writer = new BitWriter(1);
    writer.write(0xff, 8);
    writer.write(0b101, 3);
    writer.padToByte();
    writer.append(Uint8Array.of(0xff, 0xd9));
    expect([...writer.finish()]).toEqual([0xff, 0x00, 0b10111111, 0xff, 0xd9]);
  });

  it('grows past its first guess', () => {
    const writer = new BitWriter(0);
    for (let i = 0; i < 5000; i++) writer.write(0xffffff, 24);
    expect(writer.finish().length).toBe(5000 * 6);
  });
});

describe('BitReader', () => {
  it('reads back what the writer wrote', () => {
    const piece = fc.integer({ min: 1, max: 24 }).chain((count) => fc.tuple(fc.constant(count), fc.nat({ max: 2 ** count - 1 })));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 200 }), (pieces) => {
        const writer = new BitWriter(16);
        for (const [count, value] of pieces) writer.write(value, count);
        writer.padToByte();
        const reader = new BitReader(writer.finish(), 0);
        expect(pieces.map(([count]) => [count, reader.bits(count)])).toEqual(pieces);
        expect(reader.overran).toBe(false);
      }),
    );
  });

  it('stops at a marker: zero bits follow, and taking them counts as running past the data', () => {
    const reader = new BitReader(Uint8Array.of(0xab, 0xff, 0x00, 0xff, 0xd9, 0x12), 0);
    expect(reader.bits(16)).toBe(0xabff);
    expect(reader.overran).toBe(false);
    expect(reader.bits(8)).toBe(0);
    expect(reader.overran).toBe(true);
    expect(reader.markerAfterData()).toBe(3);
  });

  it('moves past the restart marker that is due, and refuses another, or data before it', () => {
    const data = Uint8Array.of(0b10111111, 0xff, 0xff, 0xd2, 0x5a, 0xff, 0xd3);
    const reader = new BitReader(data, 0);
    expect(reader.bits(2)).toBe(0b10);
    reader.restart(2);
    expect(reader.bits(8)).toBe(0x5a);
    expect(() => reader.restart(4)).toThrow(EntropyError);
    expect(() => new BitReader(data, 0).restart(2)).toThrow(EntropyError); // a whole byte of data before it
    expect(new BitReader(Uint8Array.of(0x12, 0xff, 0xd0, 0x34, 0xff, 0xd9), 0).markerAfterData()).toBe(4);
  });
});
