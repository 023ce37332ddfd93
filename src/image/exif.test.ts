import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXIF_HEADER, orientationOnlyExif, type Orientation } from './exif';
import { FORMATS } from './formats/index';
import { findBox, isoBoxes } from './formats/avif/boxes';
import { processImage } from './pipeline';
import type { RgbaImage } from './types';
import { corpus, decodeRgba, JPEGS, mutated, PNGSUITE, sameBytes, WEBPS } from '../../test/support/image-testing';
import { readOrientation } from '../../test/support/formats';

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

describe('readOrientation avif (irot/imir)', () => {
  // An odd-sized file, so a width/height mix-up cannot go unnoticed.
  const FOX = 'avif/fox.profile0.8bpc.yuv420.odd-width.odd-height.avif';
  const be = (v: number, size: number) => Array.from({ length: size }, (_, i) => Math.floor(v / 2 ** (8 * (size - 1 - i))) & 0xff);
  const box = (type: string, body: ArrayLike<number>) => [...be(8 + body.length, 4), ...[...type].map((c) => c.charCodeAt(0)), ...Array.from(body)];
  const irot = (angle: number) => box('irot', [angle]);
  const imir = (axis: number) => box('imir', [axis]);

  /**
   * The corpus file (one item, iloc v0 with 4-byte offsets, mdat after meta) with `properties` added
   * at the end of ipco and associated, essential and in the given order, with item `itemId`.
   */
  function withProperties(bytes: Uint8Array, properties: number[][], itemId = 1): Uint8Array {
    const top = [...isoBoxes(bytes, 0, bytes.length)];
    const meta = top.find((b) => b.type === 'meta')!;
    expect(top.map((b) => b.type)).toEqual(['ftyp', 'meta', 'mdat']);
    const copy = (b: { start: number; end: number }) => Array.from(bytes.subarray(b.start, b.end));
    const children = [...isoBoxes(bytes, meta.body + 4, meta.end)].map((child) => {
      if (child.type !== 'iprp') return { type: child.type, bytes: copy(child) };
      const ipco = findBox(bytes, child, 'ipco')!;
      const ipma = findBox(bytes, child, 'ipma')!;
      const count = [...isoBoxes(bytes, ipco.body, ipco.end)].length;
      const newIpco = box('ipco', [...bytes.subarray(ipco.body, ipco.end), ...properties.flat()]);
      // ipma v0, 7-bit indices: entries are item ID (2), count (1), indices.
      expect(bytes[ipma.body]).toBe(0);
      const entries: number[] = [];
      let at = ipma.body + 8;
      const total = (bytes[ipma.body + 4] << 24) | (bytes[ipma.body + 5] << 16) | (bytes[ipma.body + 6] << 8) | bytes[ipma.body + 7];
      let found = false;
      for (let e = 0; e < total; e++) {
        const id = (bytes[at] << 8) | bytes[at + 1];
        const n = bytes[at + 2];
        const indices = Array.from(bytes.subarray(at + 3, at + 3 + n));
        at += 3 + n;
        if (id === itemId) {
          indices.push(...properties.map((_, i) => 0x80 | (count + 1 + i)));
          found = true;
        }
        entries.push(...be(id, 2), indices.length, ...indices);
      }
      const extra = found ? [] : [...be(itemId, 2), properties.length, ...properties.map((_, i) => 0x80 | (count + 1 + i))];
      const newIpma = box('ipma', [0, 0, 0, 0, ...be(total + (found ? 0 : 1), 4), ...entries, ...extra]);
      return { type: 'iprp', bytes: box('iprp', [...newIpco, ...newIpma]) };
    });
    const newMeta = box('meta', [...bytes.subarray(meta.body, meta.body + 4), ...children.flatMap((c) => c.bytes)]);
    const delta = newMeta.length - (meta.end - meta.start);
    // Move the data: iloc v0 with sizes 0x04 0x40 (no extent offset, 4-byte length, 4-byte base offset):
    // header (8), version/flags (4), sizes (2), item count (2), item ID (2), data_reference_index (2), base.
    let iloc = 12; // meta header and version/flags
    for (const c of children) {
      if (c.type === 'iloc') break;
      iloc += c.bytes.length;
    }
    expect([newMeta[iloc + 12], newMeta[iloc + 13], newMeta[iloc + 15]]).toEqual([0x04, 0x40, 1]);
    const offsetAt = iloc + 20;
    const offset = newMeta.slice(offsetAt, offsetAt + 4).reduce((v, b) => v * 256 + b, 0);
    newMeta.splice(offsetAt, 4, ...be(offset + delta, 4));
    return new Uint8Array([...copy(top[0]), ...newMeta, ...copy(top[2])]);
  }

  /** HEIF semantics written out pixel by pixel: irot turns anticlockwise, then imir flips. */
  function heifTransform(image: RgbaImage, angle: number, axis: number | null): RgbaImage {
    let { width: w, height: h } = image;
    let src = new Uint32Array(image.data.slice().buffer);
    for (let turn = 0; turn < angle; turn++) {
      // 90 degrees anticlockwise: source (x, y) lands at (y, w - 1 - x) of an h-wide image.
      const dst = new Uint32Array(w * h);
      for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) dst[(w - 1 - x) * h + y] = src[y * w + x];
      src = dst;
      [w, h] = [h, w];
    }
    if (axis !== null) {
      const dst = new Uint32Array(w * h);
      for (let y = 0; y < h; y++) {
        for (let x = 0; x < w; x++) {
          // axis 0: top and bottom exchanged; axis 1: left and right exchanged (ISO/IEC 23008-12:2022).
          dst[y * w + x] = axis === 0 ? src[(h - 1 - y) * w + x] : src[y * w + (w - 1 - x)];
        }
      }
      src = dst;
    }
    return { data: new Uint8Array(src.buffer), width: w, height: h };
  }

  // [irot angle, imir axis (null = none), EXIF orientation]
  const CASES: [number, number | null, Orientation][] = [
    [0, null, 1], [0, 1, 2], [2, null, 3], [0, 0, 4],
    [1, 0, 5], [3, null, 6], [3, 0, 7], [1, null, 8],
    [1, 1, 7], [2, 0, 2], [2, 1, 4], [3, 1, 5],
  ];

  it('maps every irot/imir combination to the EXIF orientation that shows the same picture', () => {
    // A 3x2 image of distinct pixels: the EXIF value must reproduce the HEIF transform exactly.
    const tiny: RgbaImage = { data: new Uint8Array(Array.from({ length: 24 }, (_, i) => i + 1)), width: 3, height: 2 };
    const exifTransform = (image: RgbaImage, n: Orientation): RgbaImage => {
      // EXIF n as the HEIF composition libavif writes for it (avifImageExtractExifOrientationToIrotImir).
      const [angle, axis] = ({ 1: [0, null], 2: [0, 1], 3: [2, null], 4: [0, 0], 5: [1, 0], 6: [3, null], 7: [3, 0], 8: [1, null] } as const)[n];
      return heifTransform(image, angle, axis);
    };
    for (const [angle, axis, expected] of CASES) {
      const label = `irot ${angle} imir ${axis}`;
      const heif = heifTransform(tiny, angle, axis);
      expect(sameBytes(exifTransform(tiny, expected).data, heif.data), label).toBe(true);
    }
  });

  it('reads irot and imir of the primary item', async () => {
    const bytes = await corpus(FOX);
    expect(readOrientation('avif', bytes)).toBe(1);
    for (const [angle, axis, expected] of CASES) {
      const properties = [...(angle ? [irot(angle)] : []), ...(axis === null ? [] : [imir(axis)])];
      expect(readOrientation('avif', withProperties(bytes, properties)), `irot ${angle} imir ${axis}`).toBe(expected);
    }
  });

  it('applies irot before imir whatever the ipma order (as libavif and MIAF do), masks reserved bits', async () => {
    const bytes = await corpus(FOX);
    expect(readOrientation('avif', withProperties(bytes, [imir(0), irot(1)]))).toBe(5);
    expect(readOrientation('avif', withProperties(bytes, [imir(1), irot(3)]))).toBe(5);
    expect(readOrientation('avif', withProperties(bytes, [box('irot', [0xfd])]))).toBe(8); // reserved bits set, angle 1
    expect(readOrientation('avif', withProperties(bytes, [box('imir', [0xfe])]))).toBe(4); // reserved bits set, axis 0
  });

  it('ignores irot/imir of other items and unreadable properties', async () => {
    const bytes = await corpus(FOX);
    expect(readOrientation('avif', withProperties(bytes, [irot(1)], 7))).toBe(1);
    expect(readOrientation('avif', withProperties(bytes, [box('irot', [])]))).toBe(1); // empty irot: damage -> 1
  });

  it('convert makes a rotated/mirrored AVIF upright, like an EXIF-oriented JPEG', async () => {
    const bytes = await corpus(FOX);
    const stored = await decodeRgba('avif', bytes);
    const limits = { maxInputPixels: 40e6, maxOutputPixels: 40e6, memoryBudgetBytes: 100 * 2 ** 20 };
    for (const [angle, axis] of CASES.filter(([a, x]) => a !== 0 || x !== null)) {
      const label = `irot ${angle} imir ${axis}`;
      const input = withProperties(bytes, [...(angle ? [irot(angle)] : []), ...(axis === null ? [] : [imir(axis)])]);
      const result = await processImage(input, { steps: [], format: 'png', quality: 80 }, limits);
      const expected = heifTransform(stored, angle, axis);
      expect([result.width, result.height], label).toEqual([expected.width, expected.height]);
      const png = await decodeRgba('png', result.bytes);
      expect([png.width, png.height], label).toEqual([expected.width, expected.height]);
      expect(sameBytes(png.data, expected.data), `${label}: pixels`).toBe(true);
    }
  }, 120_000);

  it('always returns 1..8 and never throws (mutated rotated files)', async () => {
    const bytes = withProperties(await corpus(FOX), [irot(3), imir(1)]);
    expect(readOrientation('avif', bytes)).toBe(5);
    fc.assert(
      fc.property(mutated(bytes, 360), (input) => {
        const orientation = readOrientation('avif', input);
        expect(orientation >= 1 && orientation <= 8 && Number.isInteger(orientation)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
