import { describe, expect, it } from 'vitest';
import { jpegSegments } from '../../src/image/formats/jpeg/header';
import { pngChunks } from '../../src/image/formats/png/header';
import { corpus, createTestUser, download, json, upload } from './helpers';
import { decodeImage } from './images';
import { readOrientation } from '../support/formats';

async function strip(key: string, file: string, fields: Record<string, string> = {}) {
  const response = await upload('/api/v1/remove-metadata', key, await corpus(file), fields, file.split('/').pop());
  expect(response.status, file).toBe(200);
  const { data } = await json(response);
  return { data, bytes: new Uint8Array(await (await download(data.download_url)).arrayBuffer()) };
}

const text = (bytes: Uint8Array) => new TextDecoder('latin1').decode(bytes);

describe('POST /api/v1/remove-metadata', () => {
  it.each(['jpeg/camera/Canon_40D.jpg', 'jpeg/camera/DSCN0010.jpg', 'jpeg/camera/long_description.jpg', 'photos/photo-1mp.jpg'])(
    'strips EXIF, GPS, XMP, ICC and comments from %s without touching a pixel',
    async (file) => {
      const user = await createTestUser({ plan: 'pro' });
      const input = await corpus(file);
      const { data, bytes } = await strip(user.key, file);
      expect(data.format).toBe('jpg');
      expect(bytes.length).toBeLessThan(input.length);
      const markers = [...jpegSegments(bytes)].map((segment) => segment.marker);
      expect(markers.filter((marker) => (marker >= 0xe1 && marker <= 0xef && marker !== 0xee) || marker === 0xfe)).toEqual([]);
      expect(text(bytes)).not.toMatch(/Exif\0|http:\/\/ns\.adobe\.com\/xap|ICC_PROFILE/);
      const [before, after] = await Promise.all([decodeImage('jpeg', input), decodeImage('jpeg', bytes)]);
      expect(after.data).toEqual(before.data);
    },
  );

  it('keeps only the Orientation tag of a rotated JPEG, so it still displays upright', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const { data, bytes } = await strip(user.key, 'jpeg/orientation/landscape_6.jpg');
    expect(readOrientation('jpeg', bytes)).toBe(6);
    const exif = [...jpegSegments(bytes)].filter((segment) => segment.marker === 0xe1);
    expect(exif).toHaveLength(1);
    expect(exif[0].end - exif[0].start).toBeLessThan(64);
    expect([data.width, data.height]).toEqual([600, 450]);
  });

  it('drops PNG text, time and ICC chunks and keeps the pixels', async () => {
    const user = await createTestUser({ plan: 'pro' });
    for (const file of ['png/pngsuite/ct1n0g04.png', 'png/pngsuite/cm7n0g04.png', 'png/pngsuite/ctzn0g04.png']) {
      const { bytes } = await strip(user.key, file);
      const types = [...pngChunks(bytes)].map((chunk) => chunk.type);
      expect(types.filter((type) => ['tEXt', 'zTXt', 'iTXt', 'tIME', 'eXIf', 'iCCP'].includes(type)), file).toEqual([]);
      const [before, after] = await Promise.all([decodeImage('png', await corpus(file)), decodeImage('png', bytes)]);
      expect(after.data).toEqual(before.data);
    }
  });

  it('drops WebP metadata chunks and keeps the pixels', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const { bytes } = await strip(user.key, 'webp/test.webp');
    expect(text(bytes)).not.toMatch(/ICMT|IART|ICOP|INAM|EXIF|XMP |ICCP/);
    const [before, after] = await Promise.all([decodeImage('webp', await corpus('webp/test.webp')), decodeImage('webp', bytes)]);
    expect(after.data).toEqual(before.data);
  });

  it('strips AVIF losslessly (ICC colr box gone, same pixels), and honours an output format', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const input = await corpus('photos/photo-12mp.avif');
    const { data, bytes } = await strip(user.key, 'photos/photo-12mp.avif');
    expect(data).toMatchObject({ format: 'avif', width: 4000, height: 3000 });
    expect(text(input)).toMatch(/colrrICC/); // the corpus photo carries an ICC profile
    expect(text(bytes)).not.toMatch(/colrrICC|colrprof|prof|Exif|xap/);
    expect(input.length - bytes.length).toBeGreaterThanOrEqual(492); // the 492-byte colr box, nothing re-encoded
    const [before, after] = await Promise.all([decodeImage('avif', input), decodeImage('avif', bytes)]);
    expect([after.width, after.height]).toEqual([4000, 3000]);
    expect(after.data.length === before.data.length && after.data.every((v, i) => v === before.data[i])).toBe(true);
    const converted = await strip(user.key, 'jpeg/camera/Canon_40D.jpg', { format: 'png' });
    expect(converted.data.format).toBe('png');
    expect(new Set([...pngChunks(converted.bytes)].map((chunk) => chunk.type))).toEqual(new Set(['IHDR', 'IDAT', 'IEND']));
  }, 60_000);
});
