/// <reference types="node" />
/**
 * Fairness through the real request path (`npm run dev` over HTTP, as a client sees it): while one
 * user's 24 MP conversion runs, another user's 32x32 conversion answers within 150 ms, whatever the
 * large one is writing. Each of the small one's steps (the key in D1, the rate limiter's Durable
 * Object, the quota, R2 and the result's record) can only go on when the large run takes a turn
 * (src/image/run-context.ts), and the large run gives way to it at its turns (src/admission/cpu-share.ts).
 * `npm run test:fairness` runs it alone on the machine (test/fairness.config.ts says why it is not
 * part of `npm test` yet), since what it measures is the isolate, not the machine's other work.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { largeInput } from '../support/large-inputs';
import { DEMO_ACCOUNTS, startDevServer, type DevServer } from '../node/dev-server';

const [FREE, PRO] = DEMO_ACCOUNTS;
const LIMIT_MS = 150;

let server: DevServer;
let tiny: Uint8Array;

beforeAll(async () => {
  server = await startDevServer();
  tiny = new Uint8Array(await sharp({ create: { width: 32, height: 32, channels: 4, background: '#2a7ab0' } }).png().toBuffer());
  for (let i = 0; i < 2; i++) await convert(FREE.key, tiny, 'webp'); // instantiate everything once
}, 180_000);

afterAll(async () => {
  await server?.stop();
});

async function convert(key: string, file: Uint8Array, format: string): Promise<{ status: number; ms: number }> {
  const form = new FormData();
  form.append('file', new Blob([file]), 'upload');
  form.append('format', format);
  const started = performance.now();
  const response = await fetch(`${server.url}/api/v1/convert`, { method: 'POST', headers: { Authorization: `Bearer ${key}` }, body: form });
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a 32x32 conversion beside a 24 MP one, through wrangler dev', () => {
  it.each(['avif', 'webp', 'png'])('answers within 150 ms while a 24 MP JPEG becomes %s', async (format) => {
    const large = convert(PRO.key, await largeInput('jpeg-24mp.jpg'), format);
    const small: number[] = [];
    // While it decodes and while it encodes.
    for (const at of [900, 2200]) {
      await sleep(at - (small.length ? 900 : 0));
      const { status, ms } = await convert(FREE.key, tiny, 'webp');
      expect(status).toBe(200);
      small.push(ms);
    }
    const { status, ms } = await large;
    console.log(`24 MP JPEG -> ${format}: ${ms.toFixed(0)} ms; the small ones ${small.map((t) => t.toFixed(0)).join(', ')} ms`);
    expect(status).toBe(200);
    expect(ms, 'the small ones were sent while the large one ran').toBeGreaterThan(2200 + Math.max(...small));
    for (const t of small) expect(t).toBeLessThan(LIMIT_MS);
  });
});
