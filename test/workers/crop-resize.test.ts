import { describe, expect, it } from 'vitest';
import { corpus, createTestUser, download, json, upload } from './helpers';
import { decodeImage, encodeImage, gradient } from './images';

async function resultPixels(response: Response) {
  const { data } = await json(response);
  const bytes = new Uint8Array(await (await download(data.download_url)).arrayBuffer());
  return { data, pixels: await decodeImage(data.format === 'jpg' ? 'jpeg' : data.format, bytes) };
}

describe('POST /api/v1/crop', () => {
  it('returns exactly the pixels of the region, in the input format', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const source = gradient(40, 30);
    const response = await upload('/api/v1/crop', user.key, await encodeImage('png', source), { x: '7', y: '5', width: '20', height: '11' }, 'grid.png');
    const { data, pixels } = await resultPixels(response);
    expect(data).toMatchObject({ format: 'png', filename: 'grid.png', width: 20, height: 11 });
    for (let y = 0; y < 11; y++) {
      for (let x = 0; x < 20; x++) {
        const i = (y * 20 + x) * 4;
        expect([...pixels.data.subarray(i, i + 4)]).toEqual([x + 7, y + 5, (x + 7) ^ (y + 5), 255]);
      }
    }
  });

  it('accepts the whole image and a 1x1 corner as regions', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const png = await encodeImage('png', gradient(9, 7));
    expect((await json(await upload('/api/v1/crop', user.key, png, { x: '0', y: '0', width: '9', height: '7' }))).data).toMatchObject({ width: 9, height: 7 });
    const corner = await resultPixels(await upload('/api/v1/crop', user.key, png, { x: '8', y: '6', width: '1', height: '1' }));
    expect([...corner.pixels.data]).toEqual([8, 6, 8 ^ 6, 255]);
  });

  it('crops in the coordinates a viewer shows for an EXIF-rotated JPEG', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const upright = await resultPixels(await upload('/api/v1/convert', user.key, await corpus('jpeg/orientation/landscape_1.jpg'), { format: 'png' }));
    const rotated = await resultPixels(await upload('/api/v1/convert', user.key, await corpus('jpeg/orientation/landscape_6.jpg'), { format: 'png' }));
    expect([rotated.data.width, rotated.data.height]).toEqual([upright.data.width, upright.data.height]);
    const crop = await json(await upload('/api/v1/crop', user.key, await corpus('jpeg/orientation/landscape_6.jpg'), { x: '0', y: '0', width: String(upright.data.width), height: '10' }));
    expect(crop.data).toMatchObject({ width: upright.data.width, height: 10, format: 'jpg' });
  });

  it('keeps the input format when format is empty, as when it is left out', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const { data } = await json(await upload('/api/v1/crop', user.key, await encodeImage('png', gradient(10, 10)), { x: '1', y: '1', width: '5', height: '5', format: '' }, 'a.png'));
    expect(data).toMatchObject({ format: 'png', filename: 'a.png', width: 5, height: 5 });
  });

  it('can change the output format', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const { data } = await json(await upload('/api/v1/crop', user.key, await encodeImage('png', gradient(10, 10)), { x: '1', y: '1', width: '5', height: '5', format: 'webp' }, 'a.png'));
    expect(data).toMatchObject({ format: 'webp', filename: 'a.webp', width: 5, height: 5 });
  });
});

describe('POST /api/v1/resize', () => {
  const cases: [Record<string, string>, [number, number]][] = [
    [{ width: '100' }, [100, 75]],
    [{ height: '30' }, [40, 30]],
    [{ width: '100', keep_aspect_ratio: 'false' }, [100, 75]],
    [{ width: '100', height: '100' }, [100, 75]],
    [{ width: '100', height: '30' }, [40, 30]],
    [{ width: '100', height: '100', keep_aspect_ratio: 'false' }, [100, 100]],
    [{ width: '500' }, [500, 375]],
  ];
  it.each(cases)('%j of a 400x300 image gives %j', async (fields, [width, height]) => {
    const user = await createTestUser({ plan: 'pro' });
    const { data, pixels } = await resultPixels(await upload('/api/v1/resize', user.key, await encodeImage('png', gradient(400, 300)), fields, 'big.png'));
    expect(data).toMatchObject({ format: 'png', width, height });
    expect([pixels.width, pixels.height]).toEqual([width, height]);
  });

  it('resizes a real photo to WebP', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const { data, pixels } = await resultPixels(await upload('/api/v1/resize', user.key, await corpus('photos/photo-1mp.jpg'), { width: '400', format: 'webp' }, 'photo.jpg'));
    expect(data.format).toBe('webp');
    expect(pixels.width).toBe(400);
  });
});
