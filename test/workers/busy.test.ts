import { env, SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { admissionFor } from '../../src/admission';
import { readSettings } from '../../src/config';
import { createTestUser, expectFailure } from './helpers';

/*
 * A request that cannot start within a few seconds is told so at once (src/admission): judged from
 * the work left in what runs and waits before it, and for an upload from its Content-Length, before
 * a byte of its body is read.
 */

const MB = 2 ** 20;
const budget = readSettings(env).pixelLimits.pro.memoryBudgetBytes;

/** Memory taken by a run of the isolate that has 10 s of work left. */
async function busyIsolate() {
  return admissionFor(() => budget).admit(budget - 8 * MB, { work: { estimatedMs: 10_000, doneMs: () => 0 } });
}

describe('an isolate busy with a long run', () => {
  it('refuses an upload that would wait for it before reading its body, with Retry-After', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const release = await busyIsolate();
    try {
      // A body that never ends: an answer can only come from its Content-Length.
      const body = new ReadableStream({ pull: () => new Promise(() => {}) });
      const started = Date.now();
      const response = await SELF.fetch('http://api.test/api/v1/convert', {
        method: 'POST',
        body,
        headers: { Authorization: `Bearer ${user.key}`, 'Content-Type': 'multipart/form-data; boundary=x', 'Content-Length': String(20 * MB) },
        // @ts-expect-error: workerd wants a streamed request body marked half duplex
        duplex: 'half',
      });
      await expectFailure(response, 503, 'SERVER_BUSY');
      expect(Date.now() - started).toBeLessThan(1500);
      expect(Number(response.headers.get('Retry-After'))).toBeGreaterThanOrEqual(10);
    } finally {
      release();
    }
  });

  it('still lets small work in beside it', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const release = await busyIsolate();
    try {
      const form = new FormData();
      form.append('file', new File([new Uint8Array(await (await env.CORPUS.fetch('http://corpus/png/pngsuite/basn6a08.png')).arrayBuffer())], 'tiny.png'));
      form.append('format', 'webp');
      const response = await SELF.fetch('http://api.test/api/v1/convert', { method: 'POST', body: form, headers: { Authorization: `Bearer ${user.key}` } });
      expect(response.status).toBe(200);
    } finally {
      release();
    }
  });
});
