import { describe, expect, it } from 'vitest';
import { DISPLAY_P3, rgbProfile, SRGB_TRC } from '../../../../test/support/icc-writer';
import { pngChunk } from '../../formats/png/header';
import { av01Item, av1ItemOf, buildAvif } from '../../../../test/support/avif-builder';
import { colourProfileOf as readColourProfile, readIccProfile } from '../../../../test/support/formats';
import { corpus, expectAppError, fixture } from '../../../../test/support/image-testing';
import { FORMATS } from '../../formats/index';
import { MAX_INFLATED_PROFILE } from './inflate-profile';
import { concat } from '../../bytes';
import { zlibWithZeros } from '../../../../test/support/png-builder';

const profile = rgbProfile(DISPLAY_P3, SRGB_TRC);
const text = (s: string) => [...s].map((c) => c.charCodeAt(0));
const be32 = (v: number) => [v >>> 24, (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff];
const le32 = (v: number) => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >>> 24];

function jpegWith(slices: [number, number, Uint8Array][]): Uint8Array {
  const segment = (marker: number, payload: number[]) => [0xff, marker, (payload.length + 2) >> 8, (payload.length + 2) & 0xff, ...payload];
  const app2 = slices.flatMap(([sequence, count, part]) => segment(0xe2, [...text('ICC_PROFILE\0'), sequence, count, ...part]));
  const sof = segment(0xc0, [8, 0, 1, 0, 1, 1, 1, 0x11, 0]);
  const sos = segment(0xda, [1, 1, 0, 0, 63, 0]);
  return new Uint8Array([0xff, 0xd8, ...segment(0xe0, text('JFIF\0')), ...app2, ...sof, ...sos, 1, 2, 3, 0xff, 0xd9]);
}

async function zlib(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data.slice()]).stream().pipeThrough(new CompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function pngWith(...chunks: [string, ArrayLike<number>][]): Uint8Array {
  const all: [string, ArrayLike<number>][] = [['IHDR', [...be32(1), ...be32(1), 8, 6, 0, 0, 0]], ['IDAT', [1]], ['IEND', []]];
  all.splice(1, 0, ...chunks);
  return concat([Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a), ...all.map(([type, data]) => pngChunk(type, data))]);
}

function webpWith(flags: number, iccp: Uint8Array): Uint8Array {
  const chunk = (type: string, data: number[]) => [...text(type), ...le32(data.length), ...data, ...(data.length & 1 ? [0] : [])];
  const body = [
    ...text('WEBP'), ...chunk('VP8X', [flags, 0, 0, 0, 0, 0, 0, 0, 0, 0]), ...chunk('ICCP', [...iccp]),
    ...chunk('VP8L', [0x2f, 0, 0, 0, 0]),
  ];
  return new Uint8Array([...text('RIFF'), ...le32(body.length), ...body]);
}

const box = (type: string, ...content: number[][]) => [...be32(8 + content.flat().length), ...text(type), ...content.flat()];
const fullBox = (type: string, ...content: number[][]) => box(type, [0, 0, 0, 0], ...content);

/**
 * AVIF whose primary item 1 (real AV1 data) has `ispe` (property 1) and the `colrs` (2, 3, ...) named in
 * `associated`; the others sit in ipco too, on an item 2 that nothing shows.
 */
async function avifWith(colrs: number[][], associated: number[]): Promise<Uint8Array> {
  const tile = av1ItemOf(await corpus('avif/fox.profile0.8bpc.yuv420.avif'));
  const properties = (indices: number[]) => indices.filter((index) => index >= 2).map((index) => new Uint8Array(colrs[index - 2]));
  const others = colrs.map((_, i) => i + 2).filter((index) => !associated.includes(index));
  return buildAvif({ primary: 1, items: [av01Item(1, tile, properties(associated)), av01Item(2, tile, properties(others))] });
}
const colr = (kind: string, data: ArrayLike<number>) => box('colr', text(kind), Array.from(data));

describe('readIccProfile', () => {
  it('reassembles JPEG APP2 segments in sequence order, only when complete and consistent', async () => {
    const [a, b, c] = [profile.subarray(0, 100), profile.subarray(100, 300), profile.subarray(300)];
    expect(await readIccProfile('jpeg', jpegWith([[3, 3, c], [1, 3, a], [2, 3, b]]))).toEqual(profile);
    expect(await readIccProfile('jpeg', jpegWith([[1, 1, profile]]))).toEqual(profile);
    expect(await readIccProfile('jpeg', jpegWith([[3, 3, c], [1, 3, a]]))).toBeNull(); // missing part
    expect(await readIccProfile('jpeg', jpegWith([[1, 2, a], [1, 2, b]]))).toBeNull(); // duplicate
    expect(await readIccProfile('jpeg', jpegWith([[1, 2, a], [2, 3, b]]))).toBeNull(); // counts disagree
    expect(await readIccProfile('jpeg', jpegWith([[0, 1, a]]))).toBeNull();
    expect(await readIccProfile('jpeg', jpegWith([]))).toBeNull();
    expect(await readIccProfile('jpeg', new Uint8Array([0xff, 0xd8, 0xff, 0xe2, 0xff]))).toBeNull(); // damaged
  });

  it('inflates PNG iCCP, refusing bad headers, corrupt data and inflation bombs', async () => {
    const compressed = await zlib(profile);
    expect(await readIccProfile('png', pngWith(['iCCP', [...text('Display P3'), 0, 0, ...compressed]]))).toEqual(profile);
    expect(await readIccProfile('png', pngWith(['iCCP', [...text('x'), 0, 1, ...compressed]]))).toBeNull(); // method 1
    expect(await readIccProfile('png', pngWith(['iCCP', [0, 0, ...compressed]]))).toBeNull(); // empty name
    expect(await readIccProfile('png', pngWith(['iCCP', [...text('x'), 0, 0, ...compressed.subarray(0, 40)]]))).toBeNull();
    expect(await readIccProfile('png', pngWith(['iCCP', [...text('x'), 0, 0, 1, 2, 3, 4]]))).toBeNull();
    const bomb = await zlib(new Uint8Array(MAX_INFLATED_PROFILE + 1));
    expect(await readIccProfile('png', pngWith(['iCCP', [...text('x'), 0, 0, ...bomb]]))).toBeNull();
    const largeBomb = zlibWithZeros(new Uint8Array(0), 1e9);
    expect(await readIccProfile('png', pngWith(['iCCP', concat([Uint8Array.from(text('x')), new Uint8Array([0, 0]), largeBomb])]))).toBeNull();
    const wrongChecksum = compressed.slice();
    wrongChecksum[wrongChecksum.length - 1] ^= 1;
    expect(await readIccProfile('png', pngWith(['iCCP', [...text('x'), 0, 0, ...wrongChecksum]]))).toBeNull();
    expect(await readIccProfile('png', pngWith(['tEXt', text('a\0b')]))).toBeNull();
  });

  it('reads the WebP ICCP chunk when VP8X announces it', async () => {
    expect(await readIccProfile('webp', webpWith(0x20, profile))).toEqual(profile);
    expect(await readIccProfile('webp', webpWith(0x00, profile))).toBeNull();
  });

  it('reads the AVIF colr prof/rICC of the primary item', async () => {
    const other = profile.slice(0, 200);
    const nclx = box('colr', text('nclx'), [0, 1, 0, 13, 0, 6, 0x80]);
    expect(await readIccProfile('avif', await avifWith([nclx, colr('prof', profile)], [1, 3]))).toEqual(profile);
    expect(await readIccProfile('avif', await avifWith([colr('prof', other), colr('rICC', profile)], [1, 3]))).toEqual(profile);
    expect(await readIccProfile('avif', await avifWith([colr('prof', profile)], [1]))).toBeNull(); // not the primary's
    expect(await readIccProfile('avif', await avifWith([nclx], [1, 2]))).toBeNull();
  });

  it('has no colour without a primary item: such a file is not an image and its header is refused', async () => {
    const tile = av1ItemOf(await corpus('avif/fox.profile0.8bpc.yuv420.avif'));
    const noPrimary = buildAvif({ primary: null, items: [av01Item(1, tile, [new Uint8Array(colr('prof', profile))])] });
    expectAppError(() => FORMATS.avif.read(noPrimary), 'UNSUPPORTED_FORMAT');
  });
});

describe('readColourProfile', () => {
  const nclx = (primaries: number, transfer: number) => box('colr', text('nclx'), [0, primaries, 0, transfer, 0, 6, 0x80]);
  const cicp = (primaries: number, transfer: number) => ({ kind: 'cicp', primaries, transfer });
  const icc = { kind: 'icc', bytes: profile };

  it('reads the AVIF nclx colr of the primary item; an ICC colr wins over it', async () => {
    expect(await readColourProfile('avif', await avifWith([nclx(12, 13)], [1, 2]))).toEqual(cicp(12, 13));
    expect(await readColourProfile('avif', await avifWith([nclx(9, 16), nclx(12, 13)], [1, 2]))).toEqual(cicp(9, 16));
    expect(await readColourProfile('avif', await avifWith([nclx(12, 13), colr('prof', profile)], [1, 2, 3]))).toEqual(icc);
    expect(await readColourProfile('avif', await avifWith([colr('prof', profile), nclx(12, 13)], [1, 3, 2]))).toEqual(icc);
    expect(await readColourProfile('avif', await avifWith([nclx(12, 13), colr('prof', profile)], [1, 2]))).toEqual(cicp(12, 13)); // prof not the primary's
    expect(await readColourProfile('avif', await avifWith([nclx(12, 13)], [1]))).toBeNull(); // nclx not the primary's
    expect(await readColourProfile('avif', await avifWith([box('colr', text('nclx'), [0, 12, 0, 13])], [1, 2]))).toBeNull(); // truncated: the file is refused
  });

  it('reads PNG cICP before the image data, in preference to iCCP', async () => {
    const iccp: [string, number[]] = ['iCCP', [...text('P3'), 0, 0, ...(await zlib(profile))]];
    expect(await readColourProfile('png', pngWith(['cICP', [12, 13, 0, 1]]))).toEqual(cicp(12, 13));
    expect(await readColourProfile('png', pngWith(['cICP', [9, 13, 0, 1]], iccp))).toEqual(cicp(9, 13));
    expect(await readColourProfile('png', pngWith(iccp, ['cICP', [1, 13, 0, 1]]))).toEqual(cicp(1, 13));
    expect(await readColourProfile('png', pngWith(iccp))).toEqual(icc);
    expect(await readColourProfile('png', pngWith(['cICP', [12, 13, 1, 1]], iccp))).toEqual(icc); // matrix must be 0: invalid
    expect(await readColourProfile('png', pngWith(['cICP', [12, 13, 0]]))).toBeNull(); // wrong length
    expect(await readColourProfile('png', pngWith(['cICP', [3, 13, 0, 1]], iccp))).toEqual(icc); // reserved primaries: the ICC is usable
    expect(await readColourProfile('png', pngWith(['cICP', [3, 13, 0, 1]]))).toEqual(cicp(3, 13));
    expect(await readColourProfile('png', pngWith(['tEXt', text('a\0b')]))).toBeNull();
  });

  it('reads ICC profiles only from JPEG and WebP', async () => {
    expect(await readColourProfile('jpeg', jpegWith([[1, 1, profile]]))).toEqual(icc);
    expect(await readColourProfile('webp', webpWith(0x20, profile))).toEqual(icc);
    expect(await readColourProfile('jpeg', jpegWith([]))).toBeNull();
  });

  it('reads the code points of the avifenc and hand-made fixtures (test/fixtures/cicp)', async () => {
    expect(await readColourProfile('avif', await fixture('cicp/p3-nclx.avif'))).toEqual(cicp(12, 13));
    expect(await readColourProfile('avif', await fixture('cicp/bt2020-nclx.avif'))).toEqual(cicp(9, 13));
    expect(await readColourProfile('png', await fixture('cicp/p3-cicp.png'))).toEqual(cicp(12, 13));
    expect((await readColourProfile('avif', await fixture('colour/p3.avif')))?.kind).toBe('icc');
  });
});
