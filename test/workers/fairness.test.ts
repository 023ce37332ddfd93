import { describe, expect, it } from 'vitest';
import { gradient } from './images';
import { encodeWith, largeInput } from '../support/image-testing';
import { createTestUser, json, upload } from './helpers';

/*
 * One user's large conversion does not hold up another user's small one in the same isolate: runs
 * are admitted together by memory (src/admission) and a long run lets others go on between bands
 * and inside its codecs' long calls (JSPI yield points, src/image/run-context.ts).
 */

async function timed(call: Promise<Response>): Promise<{ status: number; ms: number; end: number }> {
  const started = performance.now();
  const response = await call;
  await json(response);
  const end = performance.now();
  return { status: response.status, ms: end - started, end };
}

describe('a small conversion beside a large one', () => {
  // One large run of each kind of yield point (libwebp's, libjpeg's, dav1d's); every input beside
  // small ones is `npm run bench`'s full-size matrix.
  it.each([
    ['a 12 MP JPEG to WebP', 'jpeg-12mp.jpg', { format: 'webp' }],
    ['a 24 MP JPEG to JPEG', 'jpeg-24mp.jpg', { format: 'jpg' }],
    // Allowances capped to what the budget leaves (packed coefficients, the AVIF result) leave room
    // for small ones beside them (plan.ts fitToBudget); before, they waited for the whole run.
    ['a 24 MP progressive JPEG to WebP', 'jpeg-24mp-progressive.jpg', { format: 'webp' }],
    // Decoded whole, its frame took 95 of the 100 MiB and the small one waited 2 s for memory.
    ['a 24 MP AVIF resized to 1600 px WebP', 'avif-24mp.avif', { width: '1600', format: 'webp' }, '/api/v1/resize'],
  ])('%s: the small one finishes long before it', async (_name, input, fields, path = '/api/v1/convert') => {
    const [big, small] = await Promise.all([createTestUser({ plan: 'pro' }), createTestUser({ plan: 'pro' })]);
    const large = await largeInput(input);
    const tiny = await encodeWith('png', gradient(32, 32));
    const bigCall = timed(upload(path, big.key, large, fields, input));
    // Once the large one is under way (its upload parsed and planned), the small one arrives.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const smallCall = timed(upload('/api/v1/convert', small.key, tiny, { format: 'webp' }, 'tiny.png'));
    const [bigResult, smallResult] = await Promise.all([bigCall, smallCall]);
    console.log(`${input}: large ${bigResult.ms.toFixed(0)} ms, small ${smallResult.ms.toFixed(0)} ms`);
    expect([bigResult.status, smallResult.status]).toEqual([200, 200]);
    expect(smallResult.end).toBeLessThan(bigResult.end);
    // Measured 15-60 ms, also with the machine busy: a second is far from anything but a small one
    // held up by the large one (the medians are the HTTP fairness test's, test/fairness).
    expect(smallResult.ms).toBeLessThan(1000);
  });
});
