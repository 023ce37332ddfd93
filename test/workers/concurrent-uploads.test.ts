import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { admissionFor } from '../../src/admission';
import { createApp } from '../../src/app';
import { readSettings } from '../../src/config';
import { storedPng } from '../support/stored-png';
import { createTestUser } from './helpers';

/*
 * Large uploads arriving together at one isolate (issue 20): each is counted from its
 * Content-Length before its body is read, so what the isolate counts never exceeds its budget,
 * and every call is answered: its result, or 503 SERVER_BUSY with Retry-After.
 */

const MB = 1_000_000;
const budget = readSettings(env).pixelLimits.pro.memoryBudgetBytes;

/** 3900 x 3850 RGB in stored deflate blocks: a 45 MB PNG, made without compressing anything. */
function largePng(): Uint8Array {
  return storedPng({
    width: 3900,
    height: 3850,
    row: (y, rgb) => {
      for (let x = 0; x < rgb.length; x += 3) rgb.set([(x / 3) & 0xff, y & 0xff, ((x / 3) ^ y) & 0xff], x);
    },
  });
}

/** A multipart body with its length, as browsers and curl send one. */
async function formBody(file: Uint8Array, fields: Record<string, string>) {
  const form = new FormData();
  form.append('file', new File([file], 'large.png'));
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  const request = new Request('http://form', { method: 'POST', body: form });
  return { body: new Uint8Array(await request.arrayBuffer()), contentType: request.headers.get('Content-Type')! };
}

describe('four 45 MB uploads at once in one isolate', () => {
  it('never counts more than the budget, and answers every call with its result or 503 and Retry-After, with and without Idempotency-Key', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const png = largePng();
    expect(png.length).toBeGreaterThan(45 * MB);
    const { body, contentType } = await formBody(png, { width: '1000', format: 'jpg' });
    const admission = admissionFor(() => budget);
    const app = createApp();

    for (const keyed of [false, true]) {
      const ctx = createExecutionContext();
      const calls = Array.from({ length: 4 }, () => {
        const headers: Record<string, string> = { Authorization: `Bearer ${user.key}`, 'Content-Type': contentType, 'Content-Length': String(body.length) };
        if (keyed) headers['Idempotency-Key'] = crypto.randomUUID();
        return Promise.resolve(app.request('http://api.test/api/v1/resize', { method: 'POST', body: body.slice(), headers }, env, ctx));
      });
      const answers = await Promise.all(calls);
      await waitOnExecutionContext(ctx);
      for (const answer of answers) {
        const outcome = answer.status === 200 ? 'stored' : answer.status === 503 && /^\d+$/.test(answer.headers.get('Retry-After') ?? '') ? 'busy' : `failed ${answer.status}: ${await answer.text()}`;
        expect(outcome).toMatch(/^(stored|busy)$/);
        if (answer.status === 200) expect(((await answer.json()) as { data: { width: number } }).data.width).toBe(1000);
      }
      expect(answers.some((answer) => answer.status === 200)).toBe(true);
      expect(admission.heldBytes).toBe(0);
    }
    // 2 x 45 MB of body for the one being read (the others wait), then its run's prediction.
    expect(admission.peakHeldBytes).toBeGreaterThan(90 * MB);
    expect(admission.peakHeldBytes).toBeLessThanOrEqual(budget);
  }, 240_000);
});
