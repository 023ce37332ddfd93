import { createExecutionContext, env, SELF, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app';
import { corpus, createTestUser, download, eventually, json, upload, usedToday } from './helpers';

/** The user's stored results: records in D1 and files in R2. */
async function storedResults(userId: number) {
  const { results } = await env.DB.prepare('SELECT uuid FROM results WHERE user_id = ?1').bind(userId).all<{ uuid: string }>();
  const listed = await env.RESULTS.list({ prefix: 'results/' });
  const recordsOf = new Set(results.map((row) => `results/${row.uuid}`));
  return { records: results.length, files: listed.objects.filter((object) => recordsOf.has(object.key)).length };
}

/** A multipart body sent as a stream in 64 KB pieces; `onSent` runs once the client has sent all of it. */
async function streamedForm(fields: Record<string, string>, file: Uint8Array, onSent: () => void) {
  const form = new FormData();
  form.append('file', new File([file], 'photo.jpg'));
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  const encoded = new Request('http://form', { method: 'POST', body: form });
  const bytes = new Uint8Array(await encoded.arrayBuffer());
  let offset = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) {
        controller.close();
        onSent();
        return;
      }
      controller.enqueue(bytes.subarray(offset, offset + 64 * 1024));
      offset += 64 * 1024;
    },
  });
  return { body, contentType: encoded.headers.get('Content-Type')! };
}

describe('a client that disconnects mid-call (through the Worker: workerd passes the hang-up on as request.signal)', () => {
  it('gets its conversion back and leaves no result behind when it hangs up as its upload ends', async () => {
    const user = await createTestUser({ usedToday: 3 });
    const client = new AbortController();
    const { body, contentType } = await streamedForm({ format: 'png' }, await corpus('photos/photo-1mp.jpg'), () => client.abort());
    const call = SELF.fetch('http://api.test/api/v1/convert', {
      method: 'POST',
      body,
      headers: { Authorization: `Bearer ${user.key}`, 'Content-Type': contentType },
      signal: client.signal,
    });
    await expect(call).rejects.toThrow(/abort/i);
    expect(await eventually(() => usedToday(user.id), 3)).toBe(3);
    expect(await eventually(() => storedResults(user.id), { records: 0, files: 0 })).toEqual({ records: 0, files: 0 });
  });

  it('gets its conversion back when it hangs up in the middle of the upload', async () => {
    const user = await createTestUser({ usedToday: 3 });
    const client = new AbortController();
    let pieces = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        // The first piece of a form, then the client is gone before the rest.
        if (++pieces === 1) controller.enqueue(new TextEncoder().encode('--b\r\nContent-Disposition: form-data; name="format"\r\n\r\npng\r\n'));
        else client.abort();
      },
    });
    const call = SELF.fetch('http://api.test/api/v1/convert', {
      method: 'POST',
      body,
      headers: { Authorization: `Bearer ${user.key}`, 'Content-Type': 'multipart/form-data; boundary=b' },
      signal: client.signal,
    });
    await expect(call).rejects.toThrow(/abort/i);
    expect(await eventually(() => usedToday(user.id), 3)).toBe(3);
  });

  it('keeps what it was given: hanging up after the answer arrived changes nothing', async () => {
    const user = await createTestUser({ usedToday: 3 });
    const client = new AbortController();
    const response = await upload('/api/v1/convert', user.key, await corpus('jpeg/camera/Canon_40D.jpg'), { format: 'webp' }, 'photo.jpg', { signal: client.signal });
    expect(response.status).toBe(200);
    const { data } = await json(response);
    client.abort();
    await new Promise((resolve) => setTimeout(resolve, 200)); // room for a wrong clean-up to run
    expect(await usedToday(user.id)).toBe(4);
    expect(await storedResults(user.id)).toEqual({ records: 1, files: 1 });
    expect((await download(data.download_url)).status).toBe(200);
  });
});

describe('a client that disconnects while its result is being stored', () => {
  it('has the stored file deleted again and its conversion given back', async () => {
    const user = await createTestUser({ usedToday: 3 });
    const client = new AbortController();
    // The real bucket; the client hangs up the moment the result's file has been written.
    const putThenHangUp = async (...args: Parameters<R2Bucket['put']>) => {
      const stored = await env.RESULTS.put(...args);
      client.abort();
      return stored;
    };
    const bucket = new Proxy(env.RESULTS, {
      get: (target, name) => (name === 'put' ? putThenHangUp : Reflect.get(target, name).bind(target)),
    });
    const form = new FormData();
    form.append('file', new File([await corpus('jpeg/camera/Canon_40D.jpg')], 'photo.jpg'));
    form.append('format', 'png');
    const ctx = createExecutionContext();
    const response = await createApp().request(
      'http://api.test/api/v1/convert',
      { method: 'POST', body: form, headers: { Authorization: `Bearer ${user.key}` }, signal: client.signal },
      { ...env, RESULTS: bucket },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(499); // nobody reads it; the request log does
    expect(await usedToday(user.id)).toBe(3);
    expect(await storedResults(user.id)).toEqual({ records: 0, files: 0 });
  });
});
