import { Hono } from 'hono';
import { validator } from 'hono/validator';
import { describe, expect, it } from 'vitest';
import { uploadForm } from './index';

const app = new Hono()
  .post(
    '/',
    uploadForm,
    validator('form', (value) => value),
    async (c) => {
      const form = c.req.valid('form') as Record<string, string | File>;
      const file = form.file as File;
      return c.json({ field: form.field, name: file.name, size: file.size, cached: c.req.bodyCache.arrayBuffer === undefined });
    },
  )
  .onError((error) => new Response(error.message, { status: 'status' in error ? (error.status as number) : 500 }));

describe('uploadForm', () => {
  it('gives the validator the platform-parsed form, and the body is never read into an ArrayBuffer', async () => {
    const form = new FormData();
    form.append('field', 'value');
    form.append('file', new File([new Uint8Array(300_000)], 'photo.jpg'));
    const response = await app.request('/', { method: 'POST', body: form });
    expect(await response.json()).toEqual({ field: 'value', name: 'photo.jpg', size: 300_000, cached: true });
  });

  it('answers 400 for a malformed multipart body', async () => {
    const response = await app.request('/', { method: 'POST', body: 'not multipart', headers: { 'Content-Type': 'multipart/form-data; boundary=B' } });
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/Malformed FormData/);
  });
});
