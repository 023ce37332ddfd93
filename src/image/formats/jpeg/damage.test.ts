import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../errors';
import { corpus, fixture, maxDifference, mutated } from '../../../../test/support/image-testing';
import { concat } from '../../bytes';
import { ENTROPY, EOI, jpegSegments, SOS, readJpegHeader } from './header';

import { openJpegDecode } from './decode';
import { liveCodecMemoryBytes } from '../../codecs/wasm-memory';
import { collectFrame } from '../../../../test/support/row-sources';

interface Outcome {
  /** The error code, or 'decoded'. */
  result: string;
  detail: string;
  pixels?: Uint8Array;
  ms: number;
  /** Codec memory still counted after the decode ended (its instance not released). */
  leftBytes: number;
}

/** Decodes the whole file and says how it ended; any error but an AppError fails the test. */
async function outcome(bytes: Uint8Array, libjpegBytes?: number): Promise<Outcome> {
  const before = liveCodecMemoryBytes();
  const started = performance.now();
  try {
    const image = await collectFrame(await openJpegDecode(bytes, readJpegHeader(bytes).frame, { shrink: 1, region: null }, libjpegBytes));
    return { result: 'decoded', detail: '', pixels: new Uint8Array(image.data), ms: performance.now() - started, leftBytes: liveCodecMemoryBytes() - before };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { result: error.code, detail: String(error.detail), ms: performance.now() - started, leftBytes: liveCodecMemoryBytes() - before };
  }
}

/** The file's segments, with the scan data after each SOS as its own item (header/jpeg.ts). */
function segments(bytes: Uint8Array) {
  return [...jpegSegments(bytes)];
}

/** Offsets inside the scan data: its start, a quarter, the middle, the last byte. */
function scanCuts(bytes: Uint8Array): number[] {
  const scan = segments(bytes).find((s) => s.marker === ENTROPY)!;
  const length = scan.end - scan.start;
  return [scan.start + 1, scan.start + (length >> 2), scan.start + (length >> 1), scan.end - 1];
}

const FF_D9 = Uint8Array.of(0xff, EOI);

describe('jpegDecoder on damaged files: UNSUPPORTED_FORMAT, never a trap, the instance released', () => {
  it('refuses the damaged corpus file', async () => {
    const { result, detail, leftBytes } = await outcome(await corpus('jpeg/bad-exif/corrupted.jpg'));
    expect({ result, leftBytes }).toEqual({ result: 'UNSUPPORTED_FORMAT', leftBytes: 0 });
    expect(detail).toMatch(/premature end of data segment/);
  });

  it('refuses files cut short anywhere, also with an EOI marker appended inside the scan data', async () => {
    for (const name of ['jpeg/s420.jpg', 'jpeg/restart-rows-420.jpg', 'jpeg/progressive-420.jpg', 'jpeg/grey.jpg', 'cmyk/ycck-420.jpg']) {
      const bytes = await fixture(name);
      const cuts = [2, 20, 200, ...scanCuts(bytes), bytes.length - 2, bytes.length - 1];
      for (const cut of cuts) {
        const { result, leftBytes } = await outcome(bytes.subarray(0, cut));
        expect({ name, cut, result, leftBytes }).toEqual({ name, cut, result: 'UNSUPPORTED_FORMAT', leftBytes: 0 });
      }
      for (const cut of scanCuts(bytes).slice(0, 3)) {
        const { result, leftBytes } = await outcome(concat([bytes.subarray(0, cut), FF_D9]));
        expect({ name, cut, withEoi: true, result, leftBytes }).toEqual({ name, cut, withEoi: true, result: 'UNSUPPORTED_FORMAT', leftBytes: 0 });
      }
    }
  });

  it('refuses the 12 MP photo cut in its scan data, with or without an EOI marker', async () => {
    const bytes = await corpus('photos/photo-12mp.jpg');
    for (const cut of [bytes.length >> 1, bytes.length - 100]) {
      for (const tail of [new Uint8Array(0), FF_D9]) {
        const { result, leftBytes } = await outcome(concat([bytes.subarray(0, cut), tail]));
        expect({ cut, eoi: tail.length > 0, result, leftBytes }).toEqual({ cut, eoi: tail.length > 0, result: 'UNSUPPORTED_FORMAT', leftBytes: 0 });
      }
    }
  }, 60_000);

  it('decodes a progressive file cut between scans with its EOI, as libjpeg and libvips do (a legal, coarser file)', async () => {
    const bytes = await fixture('jpeg/progressive-420.jpg');
    const fifthScan = segments(bytes).filter((s) => s.marker === SOS)[4];
    const { result, pixels } = await outcome(concat([bytes.subarray(0, fifthScan.start), FF_D9]));
    const whole = await outcome(bytes);
    expect(result).toBe('decoded');
    expect(maxDifference(pixels!, whole.pixels!)).toBeGreaterThan(0); // coarser, not the same image
  });

  it('refuses corrupt scan data: an invalid Huffman code, a restart marker out of sequence', async () => {
    const bytes = await fixture('jpeg/restart-rows-420.jpg');
    const scan = segments(bytes).find((s) => s.marker === ENTROPY)!;
    // 0xFF 0x00 is a stuffed 0xFF: a run of one bits longer than any Huffman code.
    const allOnes = bytes.slice();
    for (let at = scan.start + 100; at < scan.start + 140; at += 2) allOnes.set([0xff, 0x00], at);
    // The third restart marker renumbered.
    const renumbered = bytes.slice();
    const markers: number[] = [];
    for (let at = scan.start; at < scan.end - 1; at++) if (bytes[at] === 0xff && bytes[at + 1] >= 0xd0 && bytes[at + 1] <= 0xd7) markers.push(at);
    renumbered[markers[2] + 1] = 0xd0 + ((renumbered[markers[2] + 1] - 0xd0 + 3) % 8);
    for (const [what, damaged, message] of [['all ones', allOnes, /Huffman|premature|extraneous/], ['restart', renumbered, /RST|restart/]] as const) {
      const { result, detail, leftBytes } = await outcome(damaged);
      expect({ what, result, leftBytes }).toEqual({ what, result: 'UNSUPPORTED_FORMAT', leftBytes: 0 });
      expect(detail, what).toMatch(message);
    }
  });

  it('refuses garbage after SOI, and a file whose data disagrees with its frame header', async () => {
    const garbage = concat([Uint8Array.of(0xff, 0xd8), new Uint8Array(4000).map((_, i) => (i * 131 + 7) & 0xff)]);
    expect((await outcome(garbage)).result).toBe('UNSUPPORTED_FORMAT');
    // A DQT whose length holds an 8-bit table but whose spec byte says 16-bit: a reader that trusts
    // the spec reads on into an APP15 payload, where a 20000x20000 frame header waits.
    const file = await fixture('jpeg/s420.jpg');
    const dqt = [0xff, 0xdb, 0x00, 67, 0x10, ...new Array(64).fill(1)];
    const hiddenSof = [0xff, 0xc0, 0x00, 17, 8, 0x4e, 0x20, 0x4e, 0x20, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1];
    const payload = [...new Array(60).fill(0), ...hiddenSof, ...new Array(16).fill(0)];
    const hostile = concat([file.subarray(0, 2), Uint8Array.from([...dqt, 0xff, 0xef, 0x00, payload.length + 2, ...payload]), file.subarray(2)]);
    const { result, leftBytes, ms } = await outcome(hostile);
    expect({ result, leftBytes }).toEqual({ result: 'UNSUPPORTED_FORMAT', leftBytes: 0 });
    expect(ms).toBeLessThan(3000);
  });

  it('decodes a file with extraneous bytes between segments and after its scan data like the clean file', async () => {
    const bytes = await fixture('jpeg/s420.jpg');
    const parts = segments(bytes);
    const sos = parts.find((s) => s.marker === SOS)!;
    const scan = parts.find((s) => s.marker === ENTROPY)!;
    const junk = Uint8Array.of(0x12, 0x34, 0x56);
    const padded = concat([bytes.subarray(0, sos.start), junk, bytes.subarray(sos.start, scan.end), Uint8Array.of(0xff, 0x00), bytes.subarray(scan.end)]);
    const clean = await outcome(bytes);
    const { result, pixels } = await outcome(padded);
    expect(result).toBe('decoded');
    expect(maxDifference(pixels!, clean.pixels!)).toBe(0);
  });

  it('never hangs or traps on mutated files: each decode ends with an image or UNSUPPORTED_FORMAT, its instance released', async () => {
    for (const name of ['jpeg/progressive-420.jpg', 'jpeg/restart-mcus-422.jpg', 'cmyk/ycck-adobe.jpg']) {
      const bytes = await fixture(name);
      await fc.assert(
        fc.asyncProperty(mutated(bytes, 1024), async (damaged) => {
          const { result, ms, leftBytes } = await outcome(damaged);
          expect(['decoded', 'UNSUPPORTED_FORMAT']).toContain(result);
          expect(leftBytes).toBe(0);
          expect(ms).toBeLessThan(5000);
        }),
        { numRuns: 150, seed: 20261123 },
      );
    }
  }, 120_000);
});

describe('jpegDecoder work limit: scans that repeat over the image', () => {
  const FLAT = 'jpeg/flat-420-2000.jpg'; // scans: DC of Y, Cb, Cr; then AC 1-63 of Y, of Cb, of Cr
  const Y_AC = 1;
  const CR_AC = 3;

  /** The flat 2000x2000 progressive fixture with its scan `which` repeated `repeats` times in place. */
  async function repeatedScan(which: number, repeats: number): Promise<Uint8Array> {
    const bytes = await fixture(FLAT);
    const parts = segments(bytes);
    const starts = [...parts.filter((s) => s.marker === SOS).map((s) => s.start), parts.find((s) => s.marker === EOI)!.start];
    const scan = bytes.subarray(starts[which], starts[which + 1]);
    return concat([bytes.subarray(0, starts[which]), ...new Array(repeats).fill(scan), bytes.subarray(starts[which + 1])]);
  }

  it('refuses 10,000 chroma scans of a few bytes each quickly: more than 100 scans', async () => {
    const hostile = await repeatedScan(CR_AC, 10_000);
    expect(hostile.length).toBeLessThan(400_000);
    const { result, detail, ms, leftBytes } = await outcome(hostile);
    expect({ result, leftBytes }).toEqual({ result: 'UNSUPPORTED_FORMAT', leftBytes: 0 });
    expect(detail).toMatch(/more than 100 scans/);
    expect(ms).toBeLessThan(8000);
  });

  it('refuses 40 luma scans (every luma block decoded 41 times), and decodes 20 repeats like the plain file', async () => {
    const { result, detail } = await outcome(await repeatedScan(Y_AC, 40));
    expect(result).toBe('UNSUPPORTED_FORMAT');
    expect(detail).toMatch(/scans decode more than \d+ blocks/);
    const plain = await outcome(await fixture(FLAT));
    const repeated = await outcome(await repeatedScan(Y_AC, 20));
    expect(repeated.result).toBe('decoded');
    expect(maxDifference(repeated.pixels!, plain.pixels!)).toBe(0);
  }, 30_000);
});

describe('jpegDecoder memory limit', () => {
  it('fails with CONVERSION_FAILED, not damage, when libjpeg needs more than it may have, and releases the instance', async () => {
    const bytes = await fixture('jpeg/progressive-420.jpg'); // a 125 KB coefficient buffer
    const { result, detail, leftBytes } = await outcome(bytes, 64 * 1024);
    expect({ result, leftBytes }).toEqual({ result: 'CONVERSION_FAILED', leftBytes: 0 });
    expect(detail).toMatch(/memory/i);
    expect((await outcome(bytes, 200 * 1024)).result).toBe('decoded');
  });
});
