import { describe, expect, it } from 'vitest';
import { concat } from '../../src/image/bytes';
import { av01Item, av1ItemOf, buildAvif } from '../support/avif-builder';
import { pngChunk } from '../../src/image/formats/png/header';
import { hashedSamples, headerChunks, idatChunks, pngFromZlib, scanlines, zlibDeflate, zlibWithZeros, type PngSpec } from '../support/png-builder';
import { corpus, createTestUser, expectFailure, fixture, json, upload, usedToday } from './helpers';

/*
 * Hostile files through the HTTP API: each answers within 3 s (a correct image, or 422 naming the
 * problem), spends nothing from the quota when refused, and leaves the isolate answering. The
 * codecs' own tests cover each bound in detail (libjpeg-damage, png/decoder-hostile, avif/limits).
 */

const SOS = 0xda;
const EOI = 0xd9;

/** Offsets of the JPEG's SOS segments and of its EOI. */
function scanStarts(bytes: Uint8Array): { scans: number[]; eoi: number } {
  const scans: number[] = [];
  for (let i = 2; i + 1 < bytes.length; i++) {
    if (bytes[i] !== 0xff) continue;
    if (bytes[i + 1] === SOS) scans.push(i);
    if (bytes[i + 1] === EOI) return { scans, eoi: i };
  }
  throw new Error('no EOI');
}

async function timedUpload(key: string, file: Uint8Array, fields: Record<string, string>, filename?: string) {
  const started = performance.now();
  const response = await upload('/api/v1/convert', key, file, fields, filename);
  return { response, ms: performance.now() - started };
}

describe('hostile files through the API', () => {
  it('a progressive JPEG with 10,000 repeats of one scan: 422 within 3 s, nothing spent', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const flat = await fixture('jpeg/flat-420-2000.jpg');
    const { scans, eoi } = scanStarts(flat);
    const last = flat.subarray(scans.at(-1)!, eoi);
    const flood = concat([flat.subarray(0, eoi), ...new Array(10_000).fill(last), flat.subarray(eoi)]);
    const { response, ms } = await timedUpload(user.key, flood, { format: 'webp' }, 'flood.jpg');
    expect((await expectFailure(response, 422, 'UNSUPPORTED_FORMAT')).error.message).toMatch(/damaged/);
    expect(ms).toBeLessThan(3000);
    expect(await usedToday(user.id)).toBe(0);
  });

  it('a 12 MP JPEG cut in its scan data with an EOI appended: 422, nothing spent', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const photo = await corpus('photos/photo-12mp.jpg');
    const cut = concat([photo.subarray(0, Math.floor(photo.length * 0.6)), Uint8Array.of(0xff, EOI)]);
    const { response, ms } = await timedUpload(user.key, cut, { format: 'jpg' }, 'cut.jpg');
    expect((await expectFailure(response, 422, 'UNSUPPORTED_FORMAT')).error.message).toMatch(/damaged/);
    expect(ms).toBeLessThan(3000);
    expect(await usedToday(user.id)).toBe(0);
  });

  const spec: PngSpec = { width: 64, height: 64, colourType: 6, bitDepth: 8, interlaced: false, sample: hashedSamples(8) };

  it('a 64x64 PNG whose zlib stream inflates 2 GB of zeros past its rows: converted within 3 s', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const bomb = pngFromZlib({ ...spec, idatBytes: 1 << 22 }, zlibWithZeros(scanlines(spec), 2e9));
    const { response, ms } = await timedUpload(user.key, bomb, { format: 'webp' }, 'bomb.png');
    expect(response.status).toBe(200);
    expect((await json(response)).data).toMatchObject({ width: 64, height: 64 });
    expect(ms).toBeLessThan(3000);
  });

  it('a 64x64 PNG whose iCCP profile inflates 6 GB of zeros: converted within 3 s, the profile left out', async () => {
    const user = await createTestUser({ plan: 'pro' });
    // 38 MB of the upload: the platform's DecompressionStream inflated such a chunk whole before
    // its first output could be read (an 8 MB one held 8 GB for 25 s).
    const profile = concat([new TextEncoder().encode('bomb'), new Uint8Array([0, 0]), zlibWithZeros(new Uint8Array(0), 6e9)]);
    const rows = await zlibDeflate(scanlines(spec));
    const bomb = concat([...headerChunks(spec), pngChunk('iCCP', profile), ...idatChunks(rows), pngChunk('IEND')]);
    const { response, ms } = await timedUpload(user.key, bomb, { format: 'webp' }, 'bomb.png');
    expect(response.status).toBe(200);
    expect((await json(response)).data).toMatchObject({ width: 64, height: 64 });
    expect(ms).toBeLessThan(3000);
  });

  it('a PNG whose image data ends before its last rows: 422, nothing spent', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const rows = scanlines(spec);
    const short = pngFromZlib(spec, await zlibDeflate(rows.subarray(0, rows.length / 2)));
    const { response } = await timedUpload(user.key, short, { format: 'jpg' }, 'short.png');
    expect((await expectFailure(response, 422, 'UNSUPPORTED_FORMAT')).error.message).toMatch(/damaged/);
    expect(await usedToday(user.id)).toBe(0);
  });

  it('an AVIF declaring 5,000 items around one small image: 422 within 3 s, nothing spent', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const tile = av1ItemOf(await corpus('avif/fox.profile0.8bpc.yuv420.avif'));
    const items = [av01Item(1, tile), ...Array.from({ length: 5000 }, (_, i) => ({ id: i + 2, type: 'mime', data: Uint8Array.of(0) }))];
    const flood = buildAvif({ primary: 1, items });
    const { response, ms } = await timedUpload(user.key, flood, { format: 'png' }, 'flood.avif');
    await expectFailure(response, 422, 'UNSUPPORTED_FORMAT');
    expect(ms).toBeLessThan(3000);
    expect(await usedToday(user.id)).toBe(0);

    // The isolate still answers, and the same user's ordinary file converts.
    const fine = await timedUpload(user.key, await corpus('avif/fox.profile0.8bpc.yuv420.avif'), { format: 'png' }, 'fox.avif');
    expect(fine.response.status).toBe(200);
    expect(await usedToday(user.id)).toBe(1);
  });
});
