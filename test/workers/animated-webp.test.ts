import { describe, expect, it } from 'vitest';
import { concat } from '../../src/image/bytes';
import { readWebpDimensions } from '../../src/image/formats/webp/header';
import { webpChunk, webpChunks } from '../../src/image/formats/webp/riff';
import type { RgbaImage } from '../../src/image/types';
import { createTestUser, download, json, upload } from './helpers';
import { decodeImage, encodeImage, gradient } from './images';

const chunk = webpChunk;

const le24 = (v: number) => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff];

/** RIFF / VP8X (animation + alpha flags) / ANIM / one ANMF per still WebP frame, each at its (even) x, y. */
function animatedWebp(width: number, height: number, frames: { still: Uint8Array; x: number; y: number }[]): Uint8Array {
  const anmfs = frames.map(({ still, x, y }) => {
    const size = readWebpDimensions(still);
    const data = [...webpChunks(still)]
      .filter((c) => c.type === 'ALPH' || c.type === 'VP8 ' || c.type === 'VP8L')
      .map((c) => chunk(c.type, still.subarray(c.data, c.data + c.length)));
    return chunk('ANMF', [...le24(x / 2), ...le24(y / 2), ...le24(size.width - 1), ...le24(size.height - 1), ...le24(100), 0, ...concat(data)]);
  });
  const body = concat([
    chunk('VP8X', [0x12, 0, 0, 0, ...le24(width - 1), ...le24(height - 1)]),
    chunk('ANIM', [0, 0, 0, 0, 0, 0]),
    ...anmfs,
  ]);
  const header = new Uint8Array(12);
  header.set([0x52, 0x49, 0x46, 0x46], 0);
  new DataView(header.buffer).setUint32(4, 4 + body.length, true);
  header.set([0x57, 0x45, 0x42, 0x50], 8);
  return concat([header, body]);
}

function pixel(image: RgbaImage, x: number, y: number): number[] {
  const i = (y * image.width + x) * 4;
  return [...image.data.subarray(i, i + 4)];
}

describe('animated WebP', () => {
  it('is converted as its first frame placed on the animation canvas', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const first = await encodeImage('webp', gradient(20, 10));
    const second = await encodeImage('webp', gradient(32, 16));
    const animated = animatedWebp(32, 16, [
      { still: first, x: 4, y: 2 },
      { still: second, x: 0, y: 0 },
    ]);

    const response = await upload('/api/v1/convert', user.key, animated, { format: 'png' }, 'anim.webp');
    expect(response.status).toBe(200);
    const { data } = await json(response);
    expect(data).toMatchObject({ format: 'png', width: 32, height: 16 });

    const result = await decodeImage('png', new Uint8Array(await (await download(data.download_url)).arrayBuffer()));
    const frame = await decodeImage('webp', first);
    expect([result.width, result.height]).toEqual([32, 16]);
    for (let y = 0; y < 16; y++) {
      for (let x = 0; x < 32; x++) {
        const inside = x >= 4 && x < 24 && y >= 2 && y < 12;
        expect(pixel(result, x, y), `${x},${y}`).toEqual(inside ? pixel(frame, x - 4, y - 2) : [0, 0, 0, 0]);
      }
    }
  });
});
