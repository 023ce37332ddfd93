import { describe, expect, it } from 'vitest';
import { jpegSegments } from '../../src/image/formats/jpeg/header';
import { webpChunks } from '../../src/image/formats/webp/riff';
import { detectFormat } from '../../src/image/formats/index';
import type { ImageFormat } from '../../src/image/types';
import { corpus, createTestUser, download, json, upload, usedToday } from './helpers';
import { decodeImage, encodeImage, gradient, psnr } from './images';

const SOURCES: [string, ImageFormat][] = [
  ['jpeg/camera/Canon_40D.jpg', 'jpeg'],
  ['png/pngsuite/basn6a08.png', 'png'],
  ['webp/lossy_alpha1.webp', 'webp'],
  ['avif/fox.profile0.8bpc.yuv420.avif', 'avif'],
];
const TARGETS: [string, ImageFormat][] = [
  ['jpg', 'jpeg'],
  ['png', 'png'],
  ['webp', 'webp'],
  ['avif', 'avif'],
];

describe('POST /api/v1/convert', () => {
  it.each(SOURCES)('converts %s to every output format, downloadable with the right type', async (source) => {
    const user = await createTestUser({ plan: 'pro' });
    const input = await corpus(source);
    for (const [name, format] of TARGETS) {
      const response = await upload('/api/v1/convert', user.key, input, { format: name }, `my photo.${source.split('.').pop()}`);
      expect(response.status, `${source} -> ${name}`).toBe(200);
      const { success, data } = await json(response);
      expect(success).toBe(true);
      expect(data).toMatchObject({ format: name, filename: `my photo.${name}` });
      expect(data.uuid).toMatch(/^[0-9a-f]{32}$/);
      expect(data.download_url).toBe(`http://api.test/download/${data.uuid}/${name}/my%20photo.${name}`);

      const file = await download(data.download_url);
      expect(file.status).toBe(200);
      const bytes = new Uint8Array(await file.arrayBuffer());
      expect(bytes.length).toBe(data.size);
      expect(detectFormat(bytes)).toBe(format);
      expect(file.headers.get('Content-Type')).toBe(`image/${format}`);
      const decoded = await decodeImage(format, bytes);
      expect([decoded.width, decoded.height]).toEqual([data.width, data.height]);
    }
    expect(await usedToday(user.id)).toBe(4);
  }, 30_000); // four encodes of up to 1 MP each, AVIF among them: seconds on a busy machine

  it('keeps pixels exactly when converting to PNG and close at the default quality', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const original = gradient(64, 48);
    const png = await encodeImage('png', original);
    const toPng = await json(await upload('/api/v1/convert', user.key, png, { format: 'png', quality: '5' }));
    const pngPixels = await decodeImage('png', new Uint8Array(await (await download(toPng.data.download_url)).arrayBuffer()));
    expect(psnr(pngPixels, original)).toBe(Infinity);

    const sizes: number[] = [];
    for (const quality of ['20', undefined, '95']) {
      const result = await json(await upload('/api/v1/convert', user.key, png, quality ? { format: 'webp', quality } : { format: 'webp' }));
      sizes.push(result.data.size);
      const pixels = await decodeImage('webp', new Uint8Array(await (await download(result.data.download_url)).arrayBuffer()));
      expect(psnr(pixels, original)).toBeGreaterThan(quality === '20' ? 20 : 30);
    }
    // Quality is honoured: default (80) lies between 20 and 95.
    expect(sizes[0]).toBeLessThan(sizes[1]);
    expect(sizes[1]).toBeLessThan(sizes[2]);
  });

  it('makes the filename safe', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const png = await encodeImage('png', gradient(4, 4));
    const cases: [string, string][] = [
      ['../../etc/passwd', 'passwd.webp'],
      ['C:\\Users\\me\\holiday.final.png', 'holiday.final.webp'],
      ['bad\u0001name\u007f.png', 'badname.webp'],
      ['.png', 'image.webp'],
      ['x'.repeat(300) + '.png', 'x'.repeat(95) + '.webp'],
      ['été à Zürich.png', 'été à Zürich.webp'],
      ['invoice\u202egnp.exe.png', 'invoicegnp.exe.webp'],
      ["it's (mine).png", "it's (mine).webp"],
    ];
    for (const [uploaded, expected] of cases) {
      const { data } = await json(await upload('/api/v1/convert', user.key, png, { format: 'webp' }, uploaded));
      expect(data.filename).toBe(expected);
      expect(data.filename.length).toBeLessThanOrEqual(100);
      const file = await download(data.download_url);
      expect(file.status).toBe(200);
      const disposition = file.headers.get('Content-Disposition')!;
      expect(disposition).toMatch(/^attachment; filename="[\x20-\x7e]+"; filename\*=UTF-8''[A-Za-z0-9%!._~-]+$/);
      expect(decodeURIComponent(disposition.split("UTF-8''")[1])).toBe(expected);
    }
  });

  it('decides the input format from the bytes, not the name', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const jpegNamedPng = await corpus('jpeg/camera/Nikon_D70.jpg');
    const { data } = await json(await upload('/api/v1/remove-metadata', user.key, jpegNamedPng, {}, 'looks-like.png'));
    expect(data).toMatchObject({ format: 'jpg', filename: 'looks-like.jpg' });
  });

  it('writes no EXIF, XMP, ICC or text metadata into outputs, and applies the orientation instead', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const camera = await corpus('jpeg/orientation/portrait_6.jpg');
    for (const [name, format] of TARGETS.filter(([name]) => name !== 'avif')) {
      const { data } = await json(await upload('/api/v1/convert', user.key, camera, { format: name }));
      const bytes = new Uint8Array(await (await download(data.download_url)).arrayBuffer());
      if (format === 'jpeg') expect([...jpegSegments(bytes)].map((s) => s.marker).filter((m) => (m >= 0xe1 && m <= 0xef) || m === 0xfe)).toEqual([]);
      if (format === 'webp') expect([...webpChunks(bytes)].map((c) => c.type).filter((t) => ['EXIF', 'XMP ', 'ICCP'].includes(t))).toEqual([]);
      expect(new TextDecoder('latin1').decode(bytes)).not.toMatch(/Exif\0|ICC_PROFILE|xap\/1\.0|tEXt|iCCP/);
      // portrait_6 is stored landscape and displayed portrait.
      expect(data.height).toBeGreaterThan(data.width);
    }
  });

  it('puts transparent pixels on white when the output format has no alpha', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const clear = { data: new Uint8Array([0, 0, 0, 0, 0, 0, 0, 0, 255, 0, 0, 255, 255, 0, 0, 255]), width: 2, height: 2 };
    const { data } = await json(await upload('/api/v1/convert', user.key, await encodeImage('png', clear), { format: 'jpg', quality: '100' }));
    const pixels = await decodeImage('jpeg', new Uint8Array(await (await download(data.download_url)).arrayBuffer()));
    expect(pixels.data[0]).toBeGreaterThan(200);
    expect(pixels.data[1]).toBeGreaterThan(200);
  });
});
