import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXIF_HEADER, orientationOnlyExif } from '../../exif';
import { jpegSegments } from './header';
import { corpus, decodeJpeg, expectAppError, JPEGS, mutated, prefixLengths, resultOrAppError, sameBytes } from '../../../../test/support/image-testing';
import { readOrientation, stripped, readDimensions } from '../../../../test/support/formats';

function latin1(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; i += 8192) text += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return text;
}

/** Marker and first payload bytes (as text) of every segment before the first scan. */
function header(bytes: Uint8Array): { marker: number; tag: string }[] {
  const out = [];
  for (const s of jpegSegments(bytes)) {
    if (s.marker === 0xda) break;
    out.push({ marker: s.marker, tag: latin1(bytes.subarray(s.payload, Math.min(s.end, s.payload + 14))) });
  }
  return out;
}

/** Bytes from the first SOS marker to the end of EOI. */
function scans(bytes: Uint8Array): Uint8Array {
  const segments = [...jpegSegments(bytes)];
  const sos = segments.find((s) => s.marker === 0xda)!;
  const eoi = segments.find((s) => s.marker === 0xd9);
  return bytes.subarray(sos.start, eoi ? eoi.end : bytes.length);
}

const strippable = Object.keys(JPEGS).filter((p) => p.startsWith('jpeg/') || p === 'avif/fox.jpg' || p === 'photos/photo-1mp.jpg');

describe('stripJpeg', () => {
  it('removes EXIF, XMP, ICC, IPTC and comments from the corpus JPEGs, keeping JFIF and Adobe', async () => {
    for (const path of strippable) {
      const input = await corpus(path);
      const output = stripped('jpeg', input);
      const orientation = readOrientation('jpeg', input);
      const segments = header(output);
      const app = segments.filter((s) => (s.marker >= 0xe0 && s.marker <= 0xef) || s.marker === 0xfe);
      for (const s of app) {
        const allowed =
          (s.marker === 0xe0 && s.tag.startsWith('JFIF\0')) ||
          (s.marker === 0xee && s.tag.startsWith('Adobe')) ||
          (s.marker === 0xe1 && s.tag.startsWith('Exif\0\0') && orientation !== 1);
        expect(allowed, `${path}: ${s.marker.toString(16)} ${JSON.stringify(s.tag)}`).toBe(true);
      }
      expect(latin1(output)).not.toMatch(/http:\/\/ns\.adobe\.com\/xap|ICC_PROFILE|Photoshop 3\.0|Ducky/);
      const adobe = (b: Uint8Array) => header(b).some((s) => s.marker === 0xee && s.tag.startsWith('Adobe'));
      expect(adobe(output), path).toBe(adobe(input));
      expect(readOrientation('jpeg', output), path).toBe(orientation);
      expect(readDimensions('jpeg', output), path).toEqual(readDimensions('jpeg', input));
      expect(sameBytes(scans(output), scans(input)), `${path}: scan data copied byte for byte`).toBe(true);
      expect(output.length, path).toBeLessThan(input.length);
    }
  });

  it('decodes the stripped corpus JPEGs to exactly the same pixels', async () => {
    for (const path of strippable) {
      const input = await corpus(path);
      if (path.endsWith('corrupted.jpg')) {
        // Its scan is damaged: refused as damaged before and after the strip alike.
        await expect(decodeJpeg(input)).rejects.toMatchObject({ code: 'UNSUPPORTED_FORMAT' });
        await expect(decodeJpeg(stripped('jpeg', input))).rejects.toMatchObject({ code: 'UNSUPPORTED_FORMAT' });
        continue;
      }
      const before = await decodeJpeg(input);
      const after = await decodeJpeg(stripped('jpeg', input));
      expect([after.width, after.height], path).toEqual([before.width, before.height]);
      expect(sameBytes(after.data, before.data), `${path}: pixels differ`).toBe(true);
    }
  });

  it('keeps a non-1 orientation as one minimal APP1 right after SOI/APP0', async () => {
    for (const n of [2, 3, 4, 5, 6, 7, 8] as const) {
      const output = stripped('jpeg', await corpus(`jpeg/orientation/portrait_${n}.jpg`));
      const segments = header(output);
      expect(segments[0].marker).toBe(0xe0);
      expect(segments[1]).toEqual({ marker: 0xe1, tag: latin1(new Uint8Array([...EXIF_HEADER, ...orientationOnlyExif(n).subarray(0, 8)])) });
      expect(segments.filter((s) => s.marker === 0xe1)).toHaveLength(1);
      const app1 = [...jpegSegments(output)][1];
      expect(app1.end - app1.payload).toBe(6 + 26);
    }
    // without APP0 the APP1 goes right after SOI
    const input = await corpus('jpeg/orientation/landscape_1.jpg');
    const rotated = input.slice();
    const at = latin1(rotated.subarray(0, 200)).indexOf('\x12\x01\x03\x00'); // little-endian Orientation entry
    expect(at).toBeGreaterThan(0);
    rotated[at + 8] = 6;
    expect(readOrientation('jpeg', rotated)).toBe(6);
    const output = stripped('jpeg', rotated);
    expect(header(output).map((s) => s.marker)).toEqual([0xe1, 0xee, 0xdb, 0xc0, 0xc4]);
    expect(readOrientation('jpeg', output)).toBe(6);
  });

  it('strips a synthetic JPEG to exactly the expected bytes', () => {
    const seg = (marker: number, text: string) => {
      const payload = [...text].map((c) => c.charCodeAt(0));
      return [0xff, marker, (payload.length + 2) >> 8, (payload.length + 2) & 0xff, ...payload];
    };
    const jfif = seg(0xe0, 'JFIF\0\x01\x02\0\0\x01\0\x01\0\0');
    const adobe = seg(0xee, 'Adobe\0\x64\0\0\0\0\x02');
    const dqt = seg(0xdb, '\0' + 'x'.repeat(64));
    const sof = seg(0xc0, '\x08\0\x10\0\x10\x01\x01\x11\0');
    const sos = seg(0xda, '\x01\x01\0\0\x3f\0');
    const data = [0x12, 0xff, 0x00, 0x34, 0xff, 0xd3, 0x56, 0xff, 0xff]; // stuffing, RST3, fill
    const input = new Uint8Array([
      0xff, 0xd8, ...jfif, ...seg(0xe0, 'JFXX\0\x10thumb'), ...seg(0xe1, 'http://ns.adobe.com/xap/1.0/\0<x/>'),
      ...seg(0xe2, 'ICC_PROFILE\0\x01\x01....'), ...seg(0xed, 'Photoshop 3.0\0'), 0xff, 0xff, ...seg(0xfe, 'a comment'),
      ...adobe, ...seg(0xef, 'vendor'), ...dqt, ...sof, ...sos, ...data, 0xff, 0xd9, ...[1, 2, 3, 0xff, 0xe1],
    ]);
    const expected = new Uint8Array([0xff, 0xd8, ...jfif, ...adobe, ...dqt, ...sof, ...sos, ...data, 0xff, 0xd9]);
    expect(stripped('jpeg', input)).toEqual(expected);
    expect(stripped('jpeg', expected)).toEqual(expected);
  });

  it('is idempotent on the corpus', async () => {
    for (const path of ['jpeg/camera/BlueSquare.jpg', 'jpeg/orientation/landscape_5.jpg', 'avif/fox.jpg']) {
      const once = stripped('jpeg', await corpus(path));
      expect(stripped('jpeg', once), path).toEqual(once);
    }
  });

  it('strips the 12 and 24 megapixel photos quickly, dropping ICC and EXIF', async () => {
    for (const path of ['photos/photo-12mp.jpg', 'photos/photo-24mp.jpg']) {
      const input = await corpus(path);
      const started = Date.now();
      const output = stripped('jpeg', input);
      expect(Date.now() - started, path).toBeLessThan(5000);
      expect(header(output).map((s) => s.marker), path).toEqual([0xe0, 0xdb, 0xdb, 0xc0, 0xc4, 0xc4, 0xc4, 0xc4]);
      expect(sameBytes(scans(output), scans(input)), path).toBe(true);
    }
  });

  it('rejects damaged containers with UNSUPPORTED_FORMAT and never anything else', async () => {
    expectAppError(() => stripped('jpeg', new Uint8Array([0xff, 0xd8, 0xff, 0xd9])), 'UNSUPPORTED_FORMAT');
    expectAppError(() => stripped('jpeg', new Uint8Array([0x89, 0x50, 0x4e, 0x47])), 'UNSUPPORTED_FORMAT');
    const input = await corpus('jpeg/camera/Canon_40D.jpg');
    for (const n of prefixLengths(input.length, 0, 200)) {
      const output = resultOrAppError(() => stripped('jpeg', input.subarray(0, n)));
      if (output) expect(readDimensions('jpeg', output)).toEqual({ width: 100, height: 68 });
    }
    fc.assert(
      fc.property(mutated(input, 6000), (bytes) => {
        const output = resultOrAppError(() => stripped('jpeg', bytes));
        if (output) expect(output[0] === 0xff && output[1] === 0xd8).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
