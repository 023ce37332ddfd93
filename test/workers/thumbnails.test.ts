import { describe, expect, it } from 'vitest';
import { readSettings } from '../../src/config';
import type { ResizeOptions, Transform } from '../../src/image/operations';
import type { ImageFormat } from '../../src/image/types';
import { processImage } from '../../src/image/pipeline';
import { corpus, createTestUser, download, expectFailure, json, upload, usedToday } from './helpers';
import { decodeImage, encodeImage, gradient } from './images';

/*
 * fit, position and background through the API: what a client sees (sizes, kept region, padding,
 * flattening colour), the refusals (422 naming the field, no quota spent) and the memory a smart
 * crop of a 24 MP photo holds. Pixel agreement with sharp is in test/node/fit-vs-sharp.test.ts and
 * smart-crop-vs-sharp.test.ts.
 */

async function resultPixels(response: Response) {
  const { data } = await json(response);
  const bytes = new Uint8Array(await (await download(data.download_url)).arrayBuffer());
  return { data, pixels: await decodeImage(data.format === 'jpg' ? 'jpeg' : data.format, bytes) };
}

const pixel = (image: { data: Uint8Array | Uint8ClampedArray; width: number }, x: number, y: number) => [...image.data.subarray((y * image.width + x) * 4, (y * image.width + x) * 4 + 4)];

/** A 60x20 picture: left third red, middle green, right blue. */
function thirds() {
  const image = gradient(60, 20);
  for (let y = 0; y < 20; y++) {
    for (let x = 0; x < 60; x++) image.data.set(x < 20 ? [255, 0, 0, 255] : x < 40 ? [0, 255, 0, 255] : [0, 0, 255, 255], (y * 60 + x) * 4);
  }
  return image;
}

describe('fit and position on /api/v1/resize', () => {
  it.each([
    ['west', [255, 0, 0, 255]],
    ['center', [0, 255, 0, 255]],
    ['east', [0, 0, 255, 255]],
    ['0.9,0.5', [0, 0, 255, 255]],
  ])('cover with position=%s keeps that part of the picture', async (position, colour) => {
    const user = await createTestUser({ plan: 'pro' });
    const { data, pixels } = await resultPixels(await upload('/api/v1/resize', user.key, await encodeImage('png', thirds()), { width: '10', height: '10', fit: 'cover', position }, 'thirds.png'));
    expect(data).toMatchObject({ width: 10, height: 10, format: 'png' });
    expect(pixel(pixels, 5, 5)).toEqual(colour);
  });

  it('contain pads with the background, with its alpha where the output has alpha', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const png = await encodeImage('png', thirds());
    const { data, pixels } = await resultPixels(await upload('/api/v1/resize', user.key, png, { width: '60', height: '40', fit: 'contain', background: '#11223344' }));
    expect(data).toMatchObject({ width: 60, height: 40 });
    expect(pixel(pixels, 0, 0)).toEqual([0x11, 0x22, 0x33, 0x44]);
    expect(pixel(pixels, 30, 20)).toEqual([0, 255, 0, 255]);
    expect(pixel(pixels, 30, 39)).toEqual([0x11, 0x22, 0x33, 0x44]);
    const north = await resultPixels(await upload('/api/v1/resize', user.key, png, { width: '60', height: '40', fit: 'contain', position: 'north', background: '#112233' }));
    expect(pixel(north.pixels, 30, 5)).toEqual([0, 255, 0, 255]);
    expect(pixel(north.pixels, 30, 30)).toEqual([0x11, 0x22, 0x33, 255]);
  });

  it('outside covers the box without cutting; fill stretches; inside is keep_aspect_ratio=true', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const png = await encodeImage('png', thirds());
    const size = async (fields: Record<string, string>) => (await json(await upload('/api/v1/resize', user.key, png, fields))).data;
    expect(await size({ width: '30', height: '30', fit: 'outside' })).toMatchObject({ width: 90, height: 30 });
    expect(await size({ width: '30', height: '30', fit: 'fill' })).toMatchObject({ width: 30, height: 30 });
    expect(await size({ width: '30', height: '30', fit: 'inside' })).toMatchObject({ width: 30, height: 10 });
    expect(await size({ width: '30', height: '30', keep_aspect_ratio: 'true' })).toMatchObject({ width: 30, height: 10 });
    expect(await size({ width: '30', height: '30', keep_aspect_ratio: 'false' })).toMatchObject({ width: 30, height: 30 });
  });

  it('covers the box a viewer sees for an EXIF-rotated JPEG, with attention', async () => {
    const user = await createTestUser({ plan: 'pro' });
    for (const file of ['jpeg/orientation/landscape_6.jpg', 'jpeg/orientation/portrait_8.jpg']) {
      const { data } = await json(await upload('/api/v1/resize', user.key, await corpus(file), { width: '200', height: '100', fit: 'cover', position: 'attention', format: 'webp' }));
      expect(data).toMatchObject({ width: 200, height: 100, format: 'webp' });
    }
  });
});

describe('background flattens transparency on every operation', () => {
  const halfTransparent = () => {
    const image = gradient(8, 8);
    for (let i = 0; i < image.data.length; i += 4) image.data.set([0, 0, 0, 0], i);
    return image;
  };

  it.each([
    ['/api/v1/convert', { format: 'jpeg' }],
    ['/api/v1/crop', { x: '0', y: '0', width: '4', height: '4', format: 'jpeg' }],
    ['/api/v1/resize', { width: '4', format: 'jpeg' }],
    ['/api/v1/remove-metadata', { format: 'jpeg' }],
  ])('%s puts transparent pixels on the background colour', async (path, fields) => {
    const user = await createTestUser({ plan: 'pro' });
    const { pixels } = await resultPixels(await upload(path, user.key, await encodeImage('png', halfTransparent()), { ...fields, background: '#ff0000' }));
    const [r, g, b] = pixel(pixels, 1, 1);
    expect(r).toBeGreaterThan(240);
    expect(g).toBeLessThan(15);
    expect(b).toBeLessThan(15);
  });

  it('stays white by default', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const { pixels } = await resultPixels(await upload('/api/v1/convert', user.key, await encodeImage('png', halfTransparent()), { format: 'jpeg' }));
    expect(Math.min(...pixel(pixels, 1, 1).slice(0, 3))).toBeGreaterThan(240);
  });
});

describe('bad combinations: 422 INVALID_PARAMETERS naming the field, no quota spent', () => {
  it.each([
    ['/api/v1/resize', { width: '100', fit: 'cover' }, 'height'],
    ['/api/v1/resize', { height: '100', fit: 'contain' }, 'width'],
    ['/api/v1/resize', { width: '100', height: '100', fit: 'cover', position: 'middle' }, 'position'],
    ['/api/v1/resize', { width: '100', height: '100', fit: 'cover', position: '1.5,0.5' }, 'position'],
    ['/api/v1/resize', { width: '100', height: '100', fit: 'contain', position: 'attention' }, 'position'],
    ['/api/v1/resize', { width: '100', height: '100', position: 'north' }, 'position'],
    ['/api/v1/resize', { width: '100', height: '100', fit: 'sideways' }, 'fit'],
    ['/api/v1/resize', { width: '100', height: '100', fit: 'cover', keep_aspect_ratio: 'false' }, 'keep_aspect_ratio'],
    ['/api/v1/resize', { width: '100', background: 'red' }, 'background'],
    ['/api/v1/convert', { format: 'jpeg', background: '#fff' }, 'background'],
    ['/api/v1/crop', { x: '0', y: '0', width: '2', height: '2', background: '#12345' }, 'background'],
  ])('%s %o -> %s', async (path, fields, field) => {
    const user = await createTestUser({ usedToday: 3 });
    const body = await expectFailure(await upload(path, user.key, await encodeImage('png', gradient(8, 8)), fields), 422, 'INVALID_PARAMETERS');
    expect(body.error.message).toContain(`"${field}"`);
    expect(await usedToday(user.id)).toBe(3);
  });
});

describe('memory of a smart crop', () => {
  const limits = readSettings({}).pixelLimits.pro;
  const op = ({ format = 'webp', ...fields }: Partial<ResizeOptions> & { format?: ImageFormat }): Transform => ({ steps: [{ op: 'resize', keepAspectRatio: true, ...fields }], quality: 80, format });

  it('a 24 MP JPEG -> 400x400 cover/attention WebP holds no more than the 24 MP resize to 400x400 of before', async () => {
    const photo = await corpus('photos/photo-24mp.jpg');
    const before = await processImage(photo, op({ width: 400, height: 400 }), limits);
    const attention = await processImage(photo, op({ width: 400, height: 400, fit: 'cover', position: { kind: 'smart', strategy: 'attention' } }), limits);
    console.log(`24 MP -> 400x400 WebP: inside ${before.peakBytes} bytes, cover/attention ${attention.peakBytes} bytes (planned ${attention.plannedPeakBytes})`);
    expect([attention.width, attention.height]).toEqual([400, 400]);
    expect(attention.peakBytes).toBeLessThanOrEqual(before.peakBytes);
    expect(attention.peakBytes).toBeLessThanOrEqual(attention.plannedPeakBytes);
  });
});
