import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app';
import { readSettings } from '../../src/config';
import { processImage } from '../../src/image/pipeline';
import { RESULT_PART_BYTES, ResultUpload } from '../../src/storage/result-upload';
import { readDimensions } from '../support/formats';
import { corpus, decodeJpeg, largeInput, referenceJpegEncode, sameBytes } from '../support/image-testing';
import { noiseRows, storedPng } from '../support/stored-png';
import { apiClient, createTestUser, download, json, usedToday } from './helpers';

/*
 * Results stream to R2 as they are encoded (src/storage/result-upload.ts): parts of 5 MiB through
 * a multipart upload, a single put for a small file. Run against the pool's real R2 and D1; where
 * a test needs to see or time the calls, it wraps the real bucket and passes every call on.
 */

const MiB = 2 ** 20;
const PRO = readSettings({}).pixelLimits.pro;

function passOn(target: object, name: string | symbol) {
  const value: unknown = Reflect.get(target, name);
  return typeof value === 'function' ? value.bind(target) : value;
}

/** The real bucket, with its multipart calls noted (and `onPart` run after each part is stored). */
function watchedBucket(onPart: (number: number) => void = () => {}) {
  const seen = { created: [] as { key: string; uploadId: string }[], parts: 0, puts: 0 };
  const bucket = new Proxy(env.RESULTS, {
    get(target, name) {
      if (name === 'put') {
        return (...args: Parameters<R2Bucket['put']>) => {
          seen.puts++;
          return target.put(...args);
        };
      }
      if (name !== 'createMultipartUpload') return passOn(target, name);
      return async (...args: Parameters<R2Bucket['createMultipartUpload']>) => {
        const upload = await target.createMultipartUpload(...args);
        seen.created.push({ key: upload.key, uploadId: upload.uploadId });
        return new Proxy(upload, {
          get(inner, method) {
            if (method !== 'uploadPart') return passOn(inner, method);
            return async (...partArgs: Parameters<R2MultipartUpload['uploadPart']>) => {
              const part = await inner.uploadPart(...partArgs);
              seen.parts++;
              onPart(seen.parts);
              return part;
            };
          },
        });
      };
    },
  });
  return { bucket, seen };
}

/** An app on the pool's bindings with another R2 binding, as `createApp().request` runs it. */
function appWith(bucket: R2Bucket, signal?: AbortSignal) {
  const ctx = createExecutionContext();
  const client = apiClient((url, init) => Promise.resolve(createApp().request(url, { ...init, signal }, { ...env, RESULTS: bucket }, ctx)));
  return { ...client, done: () => waitOnExecutionContext(ctx) };
}

async function storedFor(userId: number) {
  const { results } = await env.DB.prepare('SELECT uuid FROM results WHERE user_id = ?1').bind(userId).all<{ uuid: string }>();
  return results.length;
}

async function objectCount(): Promise<number> {
  return (await env.RESULTS.list({ prefix: 'results/' })).objects.length;
}

/** A multipart upload that was aborted takes no more parts. */
async function expectAborted(key: string, uploadId: string) {
  const upload = env.RESULTS.resumeMultipartUpload(key, uploadId);
  await expect(upload.uploadPart(1, new Uint8Array(10))).rejects.toThrow();
}

/** 1600 x 1400 RGB noise: a 6.7 MB PNG in, and as large again out. */
const noisePng = (damageAt?: number) => storedPng({ width: 1600, height: 1400, row: noiseRows(7), damageAt });

describe('the result upload (R2 multipart)', () => {
  it('stores a file written in odd pieces as parts of exactly 5 MiB and a last one, byte for byte', async () => {
    const file = crypto.getRandomValues(new Uint8Array(60_000)).slice(0, 60_000);
    const large = new Uint8Array(2 * RESULT_PART_BYTES + 123_457);
    for (let at = 0; at < large.length; at += file.length) large.set(file.subarray(0, Math.min(file.length, large.length - at)), at);
    const { bucket, seen } = watchedBucket();
    const upload = new ResultUpload(bucket, `results/test-${crypto.randomUUID()}`, {}, large.length);
    for (let at = 0, step = 1; at < large.length; at += step, step = (step * 7 + 3) % 300_001) {
      upload.write(large.subarray(at, at + step));
      await upload.drain();
      expect(upload.heldBytes).toBeLessThanOrEqual(RESULT_PART_BYTES);
    }
    const object = await upload.finish();
    expect([seen.created.length, seen.parts, seen.puts]).toEqual([1, 3, 0]);
    expect(object.size).toBe(large.length);
    const stored = new Uint8Array(await (await env.RESULTS.get(upload.key))!.arrayBuffer());
    expect(sameBytes(stored, large)).toBe(true);
    await env.RESULTS.delete(upload.key);
  });

  it('stores a file smaller than a part with one put', async () => {
    const { bucket, seen } = watchedBucket();
    const upload = new ResultUpload(bucket, `results/test-${crypto.randomUUID()}`, {}, 1000);
    upload.write(new Uint8Array(1000).fill(7));
    await upload.finish();
    expect([seen.created.length, seen.parts, seen.puts]).toEqual([0, 0, 1]);
    expect((await env.RESULTS.head(upload.key))!.size).toBe(1000);
    await env.RESULTS.delete(upload.key);
  });

  it('leaves neither object nor parts when aborted after parts were stored', async () => {
    const { bucket, seen } = watchedBucket();
    const upload = new ResultUpload(bucket, `results/test-${crypto.randomUUID()}`, {}, 20 * MiB);
    upload.write(new Uint8Array(RESULT_PART_BYTES + 10));
    await upload.drain();
    await upload.abort();
    expect(seen.parts).toBe(1);
    expect(await env.RESULTS.head(upload.key)).toBeNull();
    await expectAborted(upload.key, seen.created[0].uploadId);
  });
});

describe('results streamed to storage through the API', () => {
  it('stores a result larger than a part by multipart, and it downloads byte for byte what the pipeline makes', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const input = noisePng();
    const expected = (await processImage(input, { steps: [], format: 'png', quality: 80 }, PRO)).bytes;
    expect(expected.length).toBeGreaterThan(RESULT_PART_BYTES);
    const { bucket, seen } = watchedBucket();
    const app = appWith(bucket);
    const response = await app.upload('/api/v1/convert', user.key, input, { format: 'png' }, 'noise.png');
    await app.done();
    expect(response.status).toBe(200);
    const { data } = await json(response);
    expect(seen.created.length).toBe(1);
    expect(seen.parts).toBe(Math.ceil(expected.length / RESULT_PART_BYTES));
    expect(data.size).toBe(expected.length);
    const downloaded = new Uint8Array(await (await download(data.download_url)).arrayBuffer());
    expect(sameBytes(downloaded, expected)).toBe(true);
  });

  it('keeps nothing and charges nothing when the decoder finds damage after parts of the result were stored', async () => {
    const user = await createTestUser({ plan: 'pro', usedToday: 2 });
    const before = await objectCount();
    // Damage at 90% of the image data: the rows before it are encoded and 5 MiB of them sent.
    const input = noisePng(Math.floor(0.9 * 1400) * (1 + 1600 * 3));
    const { bucket, seen } = watchedBucket();
    const app = appWith(bucket);
    const response = await app.upload('/api/v1/convert', user.key, input, { format: 'png' }, 'damaged.png');
    expect(response.status).toBe(422);
    expect((await json(response)).error.code).toBe('UNSUPPORTED_FORMAT');
    await app.done();
    expect(seen.parts).toBeGreaterThanOrEqual(1);
    await expectAborted(seen.created[0].key, seen.created[0].uploadId);
    expect(await env.RESULTS.head(seen.created[0].key)).toBeNull();
    expect(await objectCount()).toBe(before);
    expect(await storedFor(user.id)).toBe(0);
    expect(await usedToday(user.id)).toBe(2);
  });

  it('keeps nothing and charges nothing when the client hangs up while the result is being stored', async () => {
    const user = await createTestUser({ plan: 'pro', usedToday: 5 });
    const client = new AbortController();
    // The client is gone the moment the first part of the result is stored.
    const { bucket, seen } = watchedBucket(() => client.abort());
    const app = appWith(bucket, client.signal);
    const response = await app.upload('/api/v1/convert', user.key, noisePng(), { format: 'png' }, 'noise.png');
    await app.done();
    expect(response.status).toBe(499);
    expect(seen.parts).toBeGreaterThanOrEqual(1);
    await expectAborted(seen.created[0].key, seen.created[0].uploadId);
    expect(await env.RESULTS.head(seen.created[0].key)).toBeNull();
    expect(await storedFor(user.id)).toBe(0);
    expect(await usedToday(user.id)).toBe(5);
  });
});

/** A Pro user's conversion of `photo` through the app, with the diagnostic headers (X-Pipeline-*, Server-Timing). */
async function convertWithDiagnostics(photo: Uint8Array, fields: Record<string, string>): Promise<Response> {
  const user = await createTestUser({ plan: 'pro' });
  const ctx = createExecutionContext();
  const form = new FormData();
  form.append('file', new File([photo], 'photo.jpg'));
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  const response = await createApp().request(
    'http://api.test/api/v1/convert',
    { method: 'POST', body: form, headers: { Authorization: `Bearer ${user.key}` } },
    { ...env, DIAGNOSTIC_HEADERS: 'true' },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return response;
}

/** What the run held (X-Pipeline-Peak-Bytes) is within its prediction, and the prediction within the Pro budget. */
function expectWithinPlanAndBudget(response: Response, what: string): void {
  const peak = Number(response.headers.get('X-Pipeline-Peak-Bytes'));
  const planned = Number(response.headers.get('X-Pipeline-Planned-Bytes'));
  console.log(`${what}: peak ${(peak / MiB).toFixed(1)} MiB of ${(planned / MiB).toFixed(1)} planned`);
  expect(peak).toBeLessThanOrEqual(planned);
  expect(planned).toBeLessThanOrEqual(PRO.memoryBudgetBytes);
}

describe('memory of a streamed result', () => {
  // The optimised tables' file comes out at the end of the encode; drained as it comes, it is not
  // held whole, so a 12 MP q95 result (3.5 MB, bounded at 36 MB) keeps sharp's tables and bytes
  // (libjpeg's standard ones are 17% larger) within the 12 MP limit of 64 MiB.
  it('12 MP JPEG -> JPEG q95 is sharp\'s file, within its prediction', async () => {
    const photo = await corpus('photos/photo-12mp.jpg');
    const response = await convertWithDiagnostics(photo, { format: 'jpg', quality: '95' });
    expect(response.status).toBe(200);
    const { data } = await json(response);
    const downloaded = new Uint8Array(await (await download(data.download_url)).arrayBuffer());
    expect(sameBytes(downloaded, await referenceJpegEncode(await decodeJpeg(photo), 95))).toBe(true);
    const peak = Number(response.headers.get('X-Pipeline-Peak-Bytes'));
    const planned = Number(response.headers.get('X-Pipeline-Planned-Bytes'));
    expect(peak).toBeLessThanOrEqual(planned);
    expect(planned).toBeLessThanOrEqual(64 * MiB);
  });

  // A portrait camera photo at 48 MP: the JPEG encoder places the rotated rows in YCbCr planes
  // (72 MB; an RGB frame of them would be 144 MB, and was refused above about 28 MP).
  it('48 MP EXIF-rotated JPEG (Orientation 8) -> JPEG at full size, within its prediction and the budget', async () => {
    const photo = await largeInput('jpeg-48mp-rotated.jpg');
    const response = await convertWithDiagnostics(photo, { format: 'jpg' });
    expect(response.status).toBe(200);
    const { data } = await json(response);
    expect([data.width, data.height]).toEqual([6000, 8000]);
    const downloaded = new Uint8Array(await (await download(data.download_url)).arrayBuffer());
    expect(readDimensions('jpeg', downloaded)).toEqual({ width: 6000, height: 8000 });
    expectWithinPlanAndBudget(response, '48 MP rotated -> jpg');
  }, 120_000);

  // A portrait 24 MP photo to AVIF needed a 72 MB frame of the turned photo and was refused; its
  // strips are decoded one at a time (plan.ts withOrientStrips).
  it('24 MP EXIF-rotated JPEG (Orientation 6) -> AVIF at full size, within its prediction and the budget', async () => {
    const photo = await largeInput('jpeg-24mp-rotated.jpg');
    const response = await convertWithDiagnostics(photo, { format: 'avif' });
    expect(response.status).toBe(200);
    const { data } = await json(response);
    expect([data.width, data.height]).toEqual([4000, 6000]);
    expectWithinPlanAndBudget(response, '24 MP rotated -> avif');
  }, 120_000);

  // The 12 MP photo to every format, stored through R2: what the run held (X-Pipeline-Peak-Bytes)
  // never passes its prediction, and the prediction is below the in-memory result's.
  it.each(['png', 'jpg', 'webp', 'avif'])('12 MP JPEG -> %s holds at most its prediction', async (format) => {
    const photo = await corpus('photos/photo-12mp.jpg');
    const response = await convertWithDiagnostics(photo, { format });
    expect(response.status).toBe(200);
    const peak = Number(response.headers.get('X-Pipeline-Peak-Bytes'));
    const planned = Number(response.headers.get('X-Pipeline-Planned-Bytes'));
    const inMemory = await processImage(photo, { steps: [], format: format === 'jpg' ? 'jpeg' : (format as 'png'), quality: 80 }, PRO);
    console.log(`12 MP -> ${format}: streamed peak ${(peak / MiB).toFixed(1)} MiB of ${(planned / MiB).toFixed(1)} planned; in memory ${(inMemory.peakBytes / MiB).toFixed(1)} of ${(inMemory.plannedPeakBytes / MiB).toFixed(1)}`);
    expect(peak).toBeGreaterThan(photo.length);
    expect(peak).toBeLessThanOrEqual(planned);
    expect(planned).toBeLessThanOrEqual(inMemory.plannedPeakBytes);
    // Where the time went, storing the result after the run included.
    const timing = response.headers.get('Server-Timing') ?? '';
    for (const step of ['pipeline', 'pipeline.decode', 'pipeline.encode', 'pipeline.store']) expect(timing).toMatch(new RegExp(`(^|,)${step.replace('.', '\\.')};dur=`));
  });
});
