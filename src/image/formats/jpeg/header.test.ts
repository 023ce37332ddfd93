import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertWithinPixelLimit } from '../../limits';
import { corpus, expectAppError, fixture, JPEGS, mutated, prefixLengths, resultOrAppError } from '../../../../test/support/image-testing';
import { jpegSegments, readJpegHeader, verifyJpegStructure } from './header';
import { readDimensions } from '../../../../test/support/formats';

/** A marker segment FF <marker> <length> <payload>. */
function segment(marker: number, payload: number[] = []): number[] {
  const length = payload.length + 2;
  return [0xff, marker, length >> 8, length & 0xff, ...payload];
}

function sof(marker: number, width: number, height: number): number[] {
  return segment(marker, [8, height >> 8, height & 0xff, width >> 8, width & 0xff, 1, 1, 0x11, 0]);
}

const SOI = [0xff, 0xd8];
const SOS = segment(0xda, [1, 1, 0, 0, 63, 0]);
const EOI = [0xff, 0xd9];
const jpeg = (...parts: number[][]) => new Uint8Array(parts.flat());

describe('readDimensions jpeg', () => {
  it('reads the size of every corpus JPEG', async () => {
    for (const [path, [width, height]] of Object.entries(JPEGS)) {
      expect(readDimensions('jpeg', await corpus(path)), path).toEqual({ width, height });
    }
  });

  it('gives the full size or UNSUPPORTED_FORMAT for every prefix', async () => {
    for (const path of Object.keys(JPEGS)) {
      const bytes = await corpus(path);
      let sizedFrom = Infinity;
      for (const n of prefixLengths(bytes.length, 512, 24)) {
        const dims = resultOrAppError(() => readDimensions('jpeg', bytes.subarray(0, n)));
        if (dims) {
          expect(dims, `${path} prefix ${n}`).toEqual({ width: JPEGS[path][0], height: JPEGS[path][1] });
          sizedFrom = Math.min(sizedFrom, n);
        } else {
          expect(n, `${path}: prefix ${n} fails after ${sizedFrom} succeeded`).toBeLessThan(sizedFrom);
        }
      }
    }
  });

  it('reads a 65535x65535 SOF exactly, so the limit check rejects it', () => {
    const dims = readDimensions('jpeg', jpeg(SOI, sof(0xc0, 65535, 65535), SOS, EOI));
    expect(dims).toEqual({ width: 65535, height: 65535 });
    expectAppError(() => assertWithinPixelLimit(dims, 40_000_000, 'input'), 'FILE_TOO_LARGE');
  });

  it('reads SOF0-2, refuses the SOFn the decoder cannot decode, and skips DHT, JPG and DAC', () => {
    for (const marker of [0xc0, 0xc1, 0xc2]) {
      expect(readDimensions('jpeg', jpeg(SOI, sof(marker, 3, 2), SOS, EOI))).toEqual({ width: 3, height: 2 });
    }
    for (const marker of [0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]) {
      const error = expectAppError(() => readDimensions('jpeg', jpeg(SOI, sof(marker, 3, 2), SOS, EOI)), 'UNSUPPORTED_FORMAT');
      expect(String(error.detail)).toMatch(/SOF\d+ \((lossless|arithmetic-coded|hierarchical)\) JPEGs are not supported/);
    }
    const notFrames = [segment(0xc4, [0, 9, 9, 9, 9, 9]), segment(0xc8, [0, 9, 9, 9, 9, 9]), segment(0xcc, [0, 9, 9, 9, 9, 9])];
    expect(readDimensions('jpeg', jpeg(SOI, ...notFrames, sof(0xc0, 7, 5), SOS, EOI))).toEqual({ width: 7, height: 5 });
  });

  it('refuses a second SOF, DNL height, other precisions, component counts and sampling factors', () => {
    const frame = (precision: number, components: number[][]) =>
      segment(0xc0, [precision, 0, 8, 0, 8, components.length, ...components.flat()]);
    expect(readDimensions('jpeg', jpeg(SOI, frame(8, [[1, 0x22, 0], [2, 0x11, 1], [3, 0x11, 1]]), SOS, EOI))).toEqual({ width: 8, height: 8 });
    expect(readDimensions('jpeg', jpeg(SOI, frame(8, [[1, 0x44, 0], [2, 0x11, 1], [3, 0x11, 1], [4, 0x11, 1]]), SOS, EOI))).toEqual({ width: 8, height: 8 });
    const rejected: [string, Uint8Array][] = [
      ['second SOF', jpeg(SOI, sof(0xc0, 16, 16), sof(0xc2, 60000, 60000), SOS, EOI)],
      ['DNL height', jpeg(SOI, sof(0xc0, 16, 0), SOS, EOI)],
      ['12-bit', jpeg(SOI, frame(12, [[1, 0x11, 0]]), SOS, EOI)],
      ['2 components', jpeg(SOI, frame(8, [[1, 0x11, 0], [2, 0x11, 0]]), SOS, EOI)],
      ['5 components', jpeg(SOI, frame(8, [1, 2, 3, 4, 5].map((id) => [id, 0x11, 0])), SOS, EOI)],
      ['no components', jpeg(SOI, frame(8, []), SOS, EOI)],
      ['sampling 0', jpeg(SOI, frame(8, [[1, 0x01, 0]]), SOS, EOI)],
      ['sampling 5', jpeg(SOI, frame(8, [[1, 0x51, 0], [2, 0x11, 1], [3, 0x11, 1]]), SOS, EOI)],
      ['SOF length', jpeg(SOI, segment(0xc0, [8, 0, 8, 0, 8, 3, 1, 0x11, 0]), SOS, EOI)],
    ];
    for (const [label, input] of rejected) {
      try {
        expectAppError(() => readDimensions('jpeg', input), 'UNSUPPORTED_FORMAT');
      } catch (error) {
        throw new Error(`${label}: ${error}`);
      }
    }
    // Between scans only the full walk sees it.
    const secondFrame = jpeg(SOI, sof(0xc2, 16, 16), SOS, [1, 2], sof(0xc2, 900, 900), SOS, [3], EOI);
    expectAppError(() => verifyJpegStructure(secondFrame, readJpegHeader(secondFrame)), 'UNSUPPORTED_FORMAT');
  });

  it('skips fill bytes, standalone markers and stray bytes between segments', () => {
    const input = jpeg(SOI, [0xff, 0xff, 0xff], segment(0xe0, [1, 2, 3]), [0xff, 0xd0, 0xff, 0x01], [0x12, 0x34], sof(0xc2, 640, 480), SOS, EOI);
    expect(readDimensions('jpeg', input)).toEqual({ width: 640, height: 480 });
  });

  it('rejects a zero size, a missing or short SOF, and damaged segment lengths', () => {
    const rejected = [
      jpeg(SOI, sof(0xc0, 0, 10), SOS, EOI), // height from DNL is not supported
      jpeg(SOI, sof(0xc0, 10, 0), SOS, EOI),
      jpeg(SOI, SOS, sof(0xc0, 10, 10), EOI), // scan before the frame header
      jpeg(SOI, EOI, sof(0xc0, 10, 10)),
      jpeg(SOI, segment(0xc0, [8, 0, 1])), // short SOF
      jpeg(SOI, [0xff, 0xe1, 0x00, 0x01], sof(0xc0, 10, 10)), // length < 2
      jpeg(SOI, [0xff, 0xe1, 0x40, 0x00, 0, 0]), // length past the end
      jpeg(SOI, SOI, sof(0xc0, 10, 10)),
      jpeg(SOI),
      jpeg([0xff, 0xd8, 0xff]),
      jpeg([0x00, 0xd8, 0xff, 0xc0]),
    ];
    for (const input of rejected) expectAppError(() => readDimensions('jpeg', input), 'UNSUPPORTED_FORMAT');
  });

  it('walks the scans of a progressive JPEG through to EOI', async () => {
    const bytes = await corpus('avif/fox.jpg');
    const markers = [...jpegSegments(bytes)].map((s) => s.marker);
    expect(markers.filter((m) => m === 0xda).length).toBeGreaterThan(5);
    expect(markers.at(-1)).toBe(0xd9);
    // every scan header is followed by its scan data
    markers.forEach((m, i) => m === 0xda && expect(markers[i + 1]).toBe(0x00));
  });

  it('only ever returns a size or throws UNSUPPORTED_FORMAT (random and mutated input)', async () => {
    const bytes = await corpus('jpeg/camera/Canon_40D.jpg');
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 64 }).map((tail) => new Uint8Array([0xff, 0xd8, ...tail])),
          mutated(bytes, 6000),
        ),
        (input) => {
          const dims = resultOrAppError(() => readDimensions('jpeg', input));
          if (dims) expect(dims.width > 0 && dims.height > 0).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('readJpegHeader', () => {
  const adobe = (transform: number, length = 12) => segment(0xee, [...'Adobe'].map((c) => c.charCodeAt(0)).concat([0, 100, 0, 0, 0, 0, transform]).slice(0, length));
  const sof3 = (marker: number, sampling: number[]) => segment(marker, [8, 0, 16, 0, 16, 3, 1, sampling[0], 0, 2, sampling[1], 1, 3, sampling[2], 1]);
  const sos = (components: number[]) => segment(0xda, [components.length, ...components.flatMap((id) => [id, 0]), 0, 63, 0]);

  it('reads components, sampling, progression and the Adobe transform of real files', async () => {
    const read = async (bytes: Promise<Uint8Array>) => {
      const { components, sampling, progressive, multiScan, adobeTransform } = readJpegHeader(await bytes).frame;
      return { components, sampling: sampling.map(({ h, v }) => `${h}x${v}`).join(' '), progressive, multiScan, adobeTransform };
    };
    expect(await read(corpus('photos/photo-12mp.jpg'))).toEqual({ components: 3, sampling: '2x2 1x1 1x1', progressive: false, multiScan: false, adobeTransform: null });
    expect(await read(fixture('cmyk/cmyk-adobe.jpg'))).toEqual({ components: 4, sampling: '1x1 1x1 1x1 1x1', progressive: false, multiScan: false, adobeTransform: 0 });
    expect(await read(fixture('cmyk/ycck-420.jpg'))).toEqual({ components: 4, sampling: '2x2 1x1 1x1 2x2', progressive: false, multiScan: true, adobeTransform: 2 });
    expect(await read(fixture('cmyk/cmyk-progressive.jpg'))).toMatchObject({ components: 4, progressive: true, multiScan: true });
    expect(await read(fixture('cmyk/grey-noprofile.jpg'))).toEqual({ components: 1, sampling: '1x1', progressive: false, multiScan: false, adobeTransform: null });
  });

  it('says a sequential file is multi-scan when its first scan lacks a component, as libjpeg decides', () => {
    expect(readJpegHeader(jpeg(SOI, sof3(0xc0, [0x22, 0x11, 0x11]), sos([1, 2, 3]), EOI)).frame.multiScan).toBe(false);
    expect(readJpegHeader(jpeg(SOI, sof3(0xc0, [0x22, 0x11, 0x11]), sos([1]), EOI)).frame.multiScan).toBe(true);
    expect(readJpegHeader(jpeg(SOI, sof3(0xc2, [0x11, 0x11, 0x11]), sos([1, 2, 3]), EOI)).frame.multiScan).toBe(true);
  });

  it('takes the last Adobe APP14 of at least 12 bytes, as libjpeg does', () => {
    const frame = sof3(0xc0, [0x11, 0x11, 0x11]);
    expect(readJpegHeader(jpeg(SOI, adobe(1), adobe(2), frame, sos([1, 2, 3]), EOI)).frame.adobeTransform).toBe(2);
    expect(readJpegHeader(jpeg(SOI, adobe(1), adobe(2, 11), frame, sos([1, 2, 3]), EOI)).frame.adobeTransform).toBe(1);
    expect(readJpegHeader(jpeg(SOI, segment(0xee, [65, 100, 111, 98, 101]), frame, sos([1, 2, 3]), EOI)).frame.adobeTransform).toBe(null);
  });
});
