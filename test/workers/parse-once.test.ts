/**
 * One request reads its file's container once: each format's header reader runs once per call
 * (whatever the operation: convert, crop, resize or the lossless strip), and for AVIF the one
 * container parser (formats/avif/container.ts) is entered once for the upload, by the header. The
 * decoder, the memory plan and the strip work from that record (docs/development.md, "The image
 * folder").
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { avifContainer } from '../../src/image/formats/avif/container';
import { FORMATS } from '../../src/image/formats/index';
import type { ImageFormat } from '../../src/image/types';
import { corpus, createTestUser, upload } from './helpers';

const INPUTS: Record<ImageFormat, string> = {
  jpeg: 'jpeg/orientation/landscape_6.jpg',
  png: 'png/pngsuite/basn6a08.png',
  webp: 'webp/lossy_alpha1.webp',
  avif: 'avif/fox.profile0.8bpc.yuv420.avif',
};

const CALLS: [string, Record<string, string>][] = [
  ['/api/v1/convert', { format: 'png' }],
  ['/api/v1/crop', { x: '1', y: '2', width: '16', height: '8' }],
  ['/api/v1/resize', { width: '20' }],
  ['/api/v1/remove-metadata', {}],
];

afterEach(() => {
  vi.restoreAllMocks();
});

describe('one request parses its container once', () => {
  for (const [format, path] of Object.entries(INPUTS) as [ImageFormat, string][]) {
    it(`${format}: the header reader runs once per call, and only its own format's`, async () => {
      const user = await createTestUser({ plan: 'pro' });
      const bytes = await corpus(path);
      const reads = Object.fromEntries((Object.keys(FORMATS) as ImageFormat[]).map((name) => [name, vi.spyOn(FORMATS[name], 'read')]));
      for (const [route, fields] of CALLS) {
        for (const spy of Object.values(reads)) spy.mockClear();
        const response = await upload(route, user.key, bytes, fields);
        expect(response.status, `${route}: ${await response.clone().text()}`).toBe(200);
        for (const [name, spy] of Object.entries(reads)) expect(spy.mock.calls.length, `${route}: ${name} header reads`).toBe(name === format ? 1 : 0);
      }
    });
  }

  it('avif: the container parser is entered once for the upload, whatever the operation', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const bytes = await corpus(INPUTS.avif);
    const parse = vi.spyOn(avifContainer, 'parse');
    for (const [route, fields] of CALLS) {
      parse.mockClear();
      const response = await upload(route, user.key, bytes, fields);
      expect(response.status, route).toBe(200);
      const ofUpload = parse.mock.calls.filter(([file]) => file.byteLength === bytes.byteLength);
      expect(ofUpload.length, `${route}: parses of the uploaded container`).toBe(1);
    }
  });
});
