import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../../src/app';
import { detectFormat } from '../../../src/image/formats/index';
import { readDimensions } from '../../support/formats';
import { largeInput } from '../../support/image-testing';
import { apiClient, createTestUser, download, json, type TestUser } from '../helpers';

/*
 * The files at the edge of what the Pro plan accepts (50 MB, 50 MP), through the API as a Pro user
 * sends them, results streamed to R2: each succeeds within 100 MiB held (X-Pipeline-Peak-Bytes),
 * never more than the memory guard predicted. Each input is run through the operations that take
 * its own memory path to the edge (named in its file); every input through every operation and
 * format is `npm run bench`'s full-size matrix (docs/performance.md, "Full-size matrix"), which
 * `npm test` does not repeat. The 24 MP single item is sharp's default AVIF (8-bit 4:4:4), whose
 * 72 MB frame dav1d decodes into a window of rows.
 */

const MiB = 2 ** 20;
const FORMATS = ['jpg', 'png', 'webp', 'avif'] as const;

type Case = [label: string, path: string, fields: Record<string, string>];

const CROP = { x: '1200', y: '900', width: '2000', height: '1500' };
/** remove-metadata to another format runs the same plan as convert to it, so only its lossless path is here. */
const OPERATIONS: Case[] = [
  ...FORMATS.map((format): Case => [`convert to ${format}`, '/api/v1/convert', { format }]),
  ...FORMATS.map((format): Case => [`crop 2000x1500 to ${format}`, '/api/v1/crop', { ...CROP, format }]),
  ...FORMATS.map((format): Case => [`resize to 1600 px ${format}`, '/api/v1/resize', { width: '1600', format }]),
  ['remove-metadata', '/api/v1/remove-metadata', {}],
];

function expectedSize(fields: Record<string, string>, source: { width: number; height: number }) {
  if (fields.x !== undefined) return { width: Number(fields.width), height: Number(fields.height) };
  if (fields.width !== undefined) return { width: 1600, height: Math.round((source.height * 1600) / source.width) };
  return source;
}

/** The app with the diagnostic headers on, each call waited out (the result record is written after the answer). */
const client = apiClient(async (url, init) => {
  const ctx = createExecutionContext();
  const response = await createApp().request(url, init, { ...env, DIAGNOSTIC_HEADERS: 'true' }, ctx);
  await waitOnExecutionContext(ctx);
  return response;
});

/** `operations` of one input (a file of its own per input, so that they run side by side). */
export function describeEdgeOf(name: string, operations: string[]): void {
  const cases = OPERATIONS.filter(([label]) => operations.includes(label));
  if (cases.length !== operations.length) throw new Error(`unknown operations among ${operations.join(', ')}`);
  describe(`${name} at the edge of the Pro plan, through the API`, () => {
    let user: TestUser;
    beforeAll(async () => {
      user = await createTestUser({ plan: 'pro' });
    });

    it.each(cases)(`${name}: %s`, async (label, path, fields) => {
      const input = await largeInput(name);
      const source = readDimensions(detectFormat(input)!, input);
      const response = await client.upload(path, user.key, input, fields, name);
      const body = await json(response);
      const peak = Number(response.headers.get('X-Pipeline-Peak-Bytes'));
      const planned = Number(response.headers.get('X-Pipeline-Planned-Bytes'));
      console.log(`${name}: ${label}: ${response.status} ${body.success ? `${body.data.size} B` : body.error.message} held ${(peak / MiB).toFixed(1)} of ${(planned / MiB).toFixed(1)} MiB`);
      expect(response.status, JSON.stringify(body.error)).toBe(200);
      expect({ width: body.data.width, height: body.data.height }).toEqual(expectedSize(fields, source));
      expect(peak).toBeGreaterThan(0);
      expect(peak).toBeLessThanOrEqual(planned);
      expect(planned).toBeLessThanOrEqual(100 * MiB);
      // 48 MP WebP fits only because its prediction follows what libwebp holds: within 15% of it.
      if (name.includes('48mp') && label === 'convert to webp') expect(peak).toBeGreaterThan(0.85 * planned);
      const stored = new Uint8Array(await (await download(body.data.download_url)).arrayBuffer());
      expect(stored.byteLength).toBe(body.data.size);
    }, 180_000); // libwebp takes 30-50 s for a 48 MP picture on a shared core
  });
}
