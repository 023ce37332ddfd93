import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { detectFormat } from './index';
import { AVIFS, corpus, JPEGS, PNGSUITE, WEBPS } from '../../../test/support/image-testing';

const ascii = (text: string) => new TextEncoder().encode(text);
const bytes = (...values: number[]) => new Uint8Array(values);

/** An ISOBMFF ftyp box with the given major and compatible brands, followed by filler. */
function ftyp(major: string, ...compatible: string[]): Uint8Array {
  const size = 16 + 4 * compatible.length;
  const box = new Uint8Array(size + 16);
  new DataView(box.buffer).setUint32(0, size);
  box.set(ascii(`ftyp${major}\0\0\0\0${compatible.join('')}`), 4);
  return box;
}

describe('detectFormat', () => {
  it('recognises every corpus file by its magic bytes', async () => {
    for (const path of Object.keys(JPEGS)) expect(detectFormat(await corpus(path)), path).toBe('jpeg');
    for (const path of Object.keys(WEBPS)) expect(detectFormat(await corpus(path)), path).toBe('webp');
    for (const path of Object.keys(AVIFS)) expect(detectFormat(await corpus(path)), path).toBe('avif');
    for (const path of PNGSUITE) {
      // xs1/xs2/xs4/xs7/xcr/xlf have a damaged signature: not a PNG at all.
      const badSignature = /\/x(s\d|cr|lf)/.test(path);
      expect(detectFormat(await corpus(path)), path).toBe(badSignature ? null : 'png');
    }
  });

  it('reads AVIF from the major or any compatible brand, still or sequence', () => {
    expect(detectFormat(ftyp('avif', 'mif1', 'miaf'))).toBe('avif');
    expect(detectFormat(ftyp('mif1', 'avif', 'miaf'))).toBe('avif');
    expect(detectFormat(ftyp('avis', 'msf1'))).toBe('avif');
    expect(detectFormat(ftyp('msf1', 'iso8', 'avis'))).toBe('avif');
  });

  it('rejects HEIC and other ISOBMFF files', () => {
    expect(detectFormat(ftyp('heic', 'mif1', 'heic'))).toBeNull();
    expect(detectFormat(ftyp('mif1', 'heic'))).toBeNull();
    expect(detectFormat(ftyp('isom', 'iso2', 'mp41'))).toBeNull();
    // a brand beyond the box size does not count
    const short = ftyp('mif1', 'heic');
    short.set(ascii('avif'), 24);
    expect(detectFormat(short)).toBeNull();
  });

  it('rejects GIF, BMP, TIFF, SVG, PDF and near misses', () => {
    const rejected = [
      ascii('GIF89a\x01\x00\x01\x00'),
      ascii('GIF87a\x01\x00\x01\x00'),
      ascii('BM\x3a\x00\x00\x00\x00\x00'),
      bytes(0x49, 0x49, 0x2a, 0x00, 8, 0, 0, 0),
      bytes(0x4d, 0x4d, 0x00, 0x2a, 0, 0, 0, 8),
      ascii('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>'),
      ascii('<svg xmlns="http://www.w3.org/2000/svg"></svg>'),
      ascii('%PDF-1.7\n'),
      ascii('RIFF\x24\x00\x00\x00WAVEfmt '),
      bytes(0xff, 0xd8),
      bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a),
      new Uint8Array(0),
    ];
    for (const input of rejected) expect(detectFormat(input)).toBeNull();
  });

  it('never throws on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.constantFrom('', 'ftyp', 'RIFF'), (tail, head) => {
        const input = new Uint8Array([...ascii(head), ...tail]);
        const format = detectFormat(input);
        expect([null, 'jpeg', 'png', 'webp', 'avif']).toContain(format);
      }),
      { numRuns: 300 },
    );
  });
});
