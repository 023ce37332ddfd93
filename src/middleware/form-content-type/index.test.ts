import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { formContentType } from './index';

const app = new Hono().post('/', formContentType, async (c) => {
  const form = await c.req.formData();
  return c.json({ contentType: c.req.header('Content-Type'), field: form.get('field') });
});

const body = '--B\r\nContent-Disposition: form-data; name="field"\r\n\r\nvalue\r\n--B--\r\n';

describe('formContentType', () => {
  it.each([
    'multipart/form-data; boundary=B; charset=utf-8',
    'multipart/form-data;  boundary=B',
    'Multipart/Form-Data; charset=utf-8; boundary="B"',
  ])('reduces %s to the boundary alone, and the form still parses', async (contentType) => {
    const response = await app.request('/', { method: 'POST', body, headers: { 'Content-Type': contentType } });
    const result = (await response.json()) as { contentType: string; field: string };
    expect(result.contentType).toMatch(/^multipart\/form-data; boundary="?B"?$/);
    expect(result.field).toBe('value');
  });
});
