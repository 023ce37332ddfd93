import { describe, expect, it } from 'vitest';
import { createTestUser, expectFailure } from '../../../test/workers/helpers';
import { appWith } from '../../../test/workers/middleware-app';
import { uploadLimit } from './index';

const request = appWith([uploadLimit], async (c) => c.text(String((await c.req.arrayBuffer()).byteLength)));
const MB = 1024 * 1024;

function streamOf(bytes: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return controller.close();
      const chunk = new Uint8Array(Math.min(MB, bytes - sent));
      sent += chunk.length;
      controller.enqueue(chunk);
    },
  });
}

describe('uploadLimit', () => {
  it('lets a body within the plan through untouched', async () => {
    const user = await createTestUser();
    const response = await request(user.key, { method: 'POST', body: new Uint8Array(3 * MB) });
    expect(await response.text()).toBe(String(3 * MB));
  });

  it('refuses from Content-Length before reading the body', async () => {
    const user = await createTestUser();
    const body = await expectFailure(await request(user.key, { method: 'POST', body: new Uint8Array(11 * MB) }), 422, 'FILE_TOO_LARGE');
    expect(body.error.message).toContain('10 MB');
  });

  it('counts a body without Content-Length while it streams in', async () => {
    const user = await createTestUser();
    const init = { method: 'POST', body: streamOf(11 * MB), duplex: 'half' } as RequestInit;
    await expectFailure(await request(user.key, init), 422, 'FILE_TOO_LARGE');
  });

  it('allows Pro uploads up to 50 MB', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const response = await request(user.key, { method: 'POST', body: new Uint8Array(20 * MB) });
    expect(response.status).toBe(200);
  });
});
