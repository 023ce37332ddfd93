import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXIF_HEADER, orientationOnlyExif, readOrientation, type Orientation } from './exif';
import { corpus, JPEGS, mutated, PNGSUITE, WEBPS } from '../../test/support/image-testing';

const u16 = (v: number, little: boolean) => (little ? [v & 0xff, v >> 8] : [v >> 8, v & 0xff]);
const u32 = (v: number, little: boolean) => {
  const be = [v >>> 24, (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff];
  return little ? be.reverse() : be;
};

/** A TIFF block whose IFD0 holds a DateTime-ish entry and then Orientation (type and value given). */
function tiff(little: boolean, value: number, type = 3): number[] {
  const entry = (tag: number, t: number, count: number, v: number[]) => [...u16(tag, little), ...u16(t, little), ...u32(count, little), ...v];
  const orientationValue = type === 3 ? [...u16(value, little), 0, 0] : u32(value, little);
  return [
    ...(little ? [0x49, 0x49] : [0x4d, 0x4d]), ...u16(42, little), ...u32(8, little),
    ...u16(2, little),
    ...entry(0x010f, 2, 4, [0x41, 0x42, 0x43, 0]), // Make "ABC"
    ...entry(0x0112, type, 1, orientationValue),
    ...u32(0, little),
  ];
}

const SOF = [0xff, 0xc0, 0, 11, 8, 0, 1, 0, 1, 1, 1, 0x11, 0];
function jpegWithApp1(payload: number[]): Uint8Array {
  const length = payload.length + 2;
  return new Uint8Array([0xff, 0xd8, 0xff, 0xe1, length >> 8, length & 0xff, ...payload, ...SOF, 0xff, 0xd9]);
}
const jpegWithTiff = (block: ArrayLike<number>) => jpegWithApp1([...EXIF_HEADER, ...Array.from(block)]);

function webpWithExif(data: number[]): Uint8Array {
  const chunk = (type: string, d: number[]) => [...[...type].map((c) => c.charCodeAt(0)), ...u32(d.length, true), ...d, ...(d.length & 1 ? [0] : [])];
  const body = [...chunk('VP8X', [0x08, 0, 0, 0, 0, 0, 0, 0, 0, 0]), ...chunk('VP8L', [0x2f, 0, 0, 0, 0]), ...chunk('EXIF', data)];
  return new Uint8Array([...[...'RIFF'].map((c) => c.charCodeAt(0)), ...u32(body.length + 4, true), ...[...'WEBP'].map((c) => c.charCodeAt(0)), ...body]);
}

describe('readOrientation', () => {
  it('reads orientations 1-8 of the corpus orientation photos', async () => {
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8]) {
      expect(readOrientation('jpeg', await corpus(`jpeg/orientation/landscape_${n}.jpg`))).toBe(n);
      expect(readOrientation('jpeg', await corpus(`jpeg/orientation/portrait_${n}.jpg`))).toBe(n);
    }
  });

  it('gives 1 for the camera, bad-EXIF and photo JPEGs, and for files without EXIF', async () => {
    for (const path of Object.keys(JPEGS).filter((p) => !p.includes('/orientation/'))) {
      expect(readOrientation('jpeg', await corpus(path)), path).toBe(1);
    }
    for (const path of Object.keys(WEBPS)) expect(readOrientation('webp', await corpus(path)), path).toBe(1);
    for (const path of PNGSUITE) expect(readOrientation('png', await corpus(path)), path).toBe(1);
    expect(readOrientation('avif', await corpus('photos/photo-12mp.avif'))).toBe(1);
  });

  it('reads both TIFF byte orders, SHORT and LONG values', () => {
    for (const little of [true, false]) {
      for (const n of [1, 2, 3, 4, 5, 6, 7, 8]) {
        expect(readOrientation('jpeg', jpegWithTiff(tiff(little, n)))).toBe(n);
        expect(readOrientation('jpeg', jpegWithTiff(tiff(little, n, 4)))).toBe(n);
      }
    }
  });

  it('reads the WebP EXIF chunk (with or without an Exif header) and the PNG eXIf chunk', async () => {
    expect(readOrientation('webp', webpWithExif(tiff(false, 6)))).toBe(6);
    expect(readOrientation('webp', webpWithExif([...EXIF_HEADER, ...tiff(true, 8)]))).toBe(8);
    // exif2c08.png has a real eXIf chunk (orientation 1); patch its value to 3.
    const png = (await corpus('png/pngsuite/exif2c08.png')).slice();
    const data = png.findIndex((_, i) => String.fromCharCode(...png.subarray(i, i + 4)) === 'eXIf') + 4;
    expect(Array.from(png.subarray(data + 10, data + 12))).toEqual([0x01, 0x12]); // IFD0 entry 0: Orientation
    expect(readOrientation('png', png)).toBe(1);
    png[data + 19] = 3; // low byte of its SHORT value
    expect(readOrientation('png', png)).toBe(3);
  });

  it('gives 1 for invalid or unreadable orientation data, never throwing', () => {
    const cases = [
      jpegWithTiff(tiff(true, 0)),
      jpegWithTiff(tiff(true, 9)),
      jpegWithTiff(tiff(false, 0x0106)),
      jpegWithTiff(tiff(true, 6, 7)), // UNDEFINED type
      jpegWithTiff(tiff(true, 6).slice(0, 20)), // truncated before the Orientation entry
      jpegWithTiff([0x49, 0x49, 43, 0, 8, 0, 0, 0]), // not 42
      jpegWithTiff([0x49, 0x49, 42, 0, 0xff, 0xff, 0, 0]), // IFD past the end
      jpegWithTiff([0x4d, 0x4d, 0, 42, 0, 0, 0, 8, 0xff, 0xff]), // 65535 entries, none present
      jpegWithApp1([...new TextEncoder().encode('http://ns.adobe.com/xap/1.0/\0'), ...tiff(true, 6)]), // XMP, not Exif
      new Uint8Array([0xff, 0xd8, 0xff, 0xe1, 0x40, 0x00]), // APP1 past the end
      new Uint8Array(0),
    ];
    for (const input of cases) expect(readOrientation('jpeg', input)).toBe(1);
    expect(readOrientation('png', new Uint8Array(3))).toBe(1);
    expect(readOrientation('webp', webpWithExif([1, 2, 3]))).toBe(1);
  });

  it('orientationOnlyExif builds a 26-byte TIFF block that reads back', () => {
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8] as Orientation[]) {
      const block = orientationOnlyExif(n);
      expect(block.length).toBe(26);
      expect(readOrientation('jpeg', jpegWithTiff(block))).toBe(n);
      expect(readOrientation('webp', webpWithExif(Array.from(block)))).toBe(n);
    }
  });

  it('always returns 1..8 and never throws (random and mutated input)', async () => {
    const photo = await corpus('jpeg/orientation/landscape_6.jpg');
    const app1 = photo.subarray(0, 2200); // SOI, APP0, ICC APP2 and the Exif APP1
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 80 }).map((tail) => jpegWithTiff(tail)),
          fc.uint8Array({ maxLength: 80 }).map((tail) => jpegWithTiff([0x4d, 0x4d, 0, 42, 0, 0, 0, 8, ...tail])),
          mutated(app1, app1.length),
        ),
        fc.constantFrom('jpeg', 'png', 'webp', 'avif' as const),
        (input, format) => {
          const orientation = readOrientation(format, input);
          expect(orientation >= 1 && orientation <= 8 && Number.isInteger(orientation)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
