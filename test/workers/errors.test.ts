import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { handleError } from '../../src/http/error-handler';
import type { AppEnv } from '../../src/env';
import { api, corpus, createTestUser, expectFailure, json, upload } from './helpers';
import { encodeImage, gradient, pngHeaderOnly } from './images';

describe('failure envelope for routing errors', () => {
  it('answers an unknown /api/v1 path with 404 NOT_FOUND', async () => {
    await expectFailure(await api('/api/v1/nope'), 404, 'NOT_FOUND');
    await expectFailure(await api('/api/v2/me'), 404, 'NOT_FOUND');
  });

  it('answers a wrong method with 405 and an Allow header', async () => {
    const get = await api('/api/v1/convert');
    await expectFailure(get, 405, 'METHOD_NOT_ALLOWED');
    expect(get.headers.get('Allow')).toBe('POST');
    const del = await api('/api/v1/me', { method: 'DELETE' });
    await expectFailure(del, 405, 'METHOD_NOT_ALLOWED');
    expect(del.headers.get('Allow')).toBe('GET, HEAD');
  });

  it('turns an uncaught runtime error into 500 CONVERSION_FAILED without leaking it', async () => {
    const app = new Hono<AppEnv>().get('/boom', () => {
      throw new TypeError('secret internal detail at line 42');
    });
    app.onError(handleError);
    const response = await app.request('/boom');
    const body = await expectFailure(response, 500, 'CONVERSION_FAILED');
    expect(JSON.stringify(body)).not.toMatch(/secret|line 42|TypeError|at /);
    expect(response.headers.get('Content-Type')).toMatch(/application\/json/);
  });
});

describe('request validation: 422 INVALID_PARAMETERS naming the field', () => {
  const png = () => encodeImage('png', gradient(8, 6));

  it('refuses a body that is not multipart/form-data', async () => {
    const { key } = await createTestUser({ plan: 'pro' });
    const asJson = await api('/api/v1/convert', { method: 'POST', key, headers: { 'Content-Type': 'application/json' }, body: '{"format":"png"}' });
    await expectFailure(asJson, 422, 'INVALID_PARAMETERS');
    const noBody = await api('/api/v1/convert', { method: 'POST', key });
    await expectFailure(noBody, 422, 'INVALID_PARAMETERS');
    const broken = await api('/api/v1/convert', { method: 'POST', key, headers: { 'Content-Type': 'multipart/form-data; boundary=xyz' }, body: 'not a form' });
    await expectFailure(broken, 422, 'INVALID_PARAMETERS');
  });

  it('refuses a form without a file', async () => {
    const { key } = await createTestUser({ plan: 'pro' });
    const body = await expectFailure(await upload('/api/v1/convert', key, null, { format: 'png' }), 422, 'INVALID_PARAMETERS');
    expect(body.error.message).toContain('"file"');
  });

  it.each([
    ['convert', { format: 'gif' }, 'format'],
    ['convert', {}, 'format'],
    ['convert', { format: 'png', quality: '0' }, 'quality'],
    ['convert', { format: 'png', quality: '101' }, 'quality'],
    ['convert', { format: 'png', quality: '12abc' }, 'quality'],
    ['convert', { format: 'png', quality: '1.5' }, 'quality'],
    ['convert', { format: 'png', quality: '' }, 'quality'],
    ['convert', { format: 'png', quality: '-5' }, 'quality'],
    ['crop', { x: '0', y: '0', width: '2' }, 'height'],
    ['crop', { x: '-1', y: '0', width: '2', height: '2' }, 'x'],
    ['resize', {}, 'width'],
    ['resize', { width: '0' }, 'width'],
    ['resize', { height: '12001' }, 'height'],
    ['resize', { width: '10', keep_aspect_ratio: 'maybe' }, 'keep_aspect_ratio'],
    ['resize', { width: '10', keep_aspect_ratio: 'constructor' }, 'keep_aspect_ratio'],
    ['resize', { width: '10', keep_aspect_ratio: '__proto__' }, 'keep_aspect_ratio'],
    ['remove-metadata', { format: 'bmp' }, 'format'],
  ])('%s with %j names "%s"', async (operation, fields, field) => {
    const { key } = await createTestUser({ plan: 'pro' });
    const response = await upload(`/api/v1/${operation}`, key, await png(), fields as Record<string, string>);
    const body = await expectFailure(response, 422, 'INVALID_PARAMETERS');
    expect(body.error.message).toContain(`"${field}"`);
  });

  it('states the image size when a crop region lies outside the image', async () => {
    const { key } = await createTestUser({ plan: 'pro' });
    const body = await expectFailure(await upload('/api/v1/crop', key, await png(), { x: '4', y: '0', width: '5', height: '2' }), 422, 'INVALID_PARAMETERS');
    expect(body.error.message).toContain('8x6');
    const empty = await expectFailure(await upload('/api/v1/crop', key, await png(), { x: '0', y: '0', width: '0', height: '2' }), 422, 'INVALID_PARAMETERS');
    expect(empty.error.message).toContain('8x6');
  });

  it('accepts a multipart Content-Type with extra parameters', async () => {
    const { key } = await createTestUser({ plan: 'pro' });
    const form = new FormData();
    form.append('file', new File([await png()], 'a.png'));
    form.append('format', 'webp');
    const encoded = new Response(form);
    const contentType = encoded.headers.get('Content-Type')!;
    const response = await api('/api/v1/convert', { method: 'POST', key, body: await encoded.arrayBuffer(), headers: { 'Content-Type': `${contentType}; charset=utf-8` } });
    expect(response.status).toBe(200);
  });

  it('accepts every boolean spelling of keep_aspect_ratio', async () => {
    const { key } = await createTestUser({ plan: 'pro' });
    for (const value of ['TRUE', 'off']) {
      const response = await upload('/api/v1/resize', key, await png(), { width: '4', height: '4', keep_aspect_ratio: value });
      expect(response.status).toBe(200);
      expect((await json(response)).data).toMatchObject(value === 'TRUE' ? { width: 4, height: 3 } : { width: 4, height: 4 });
    }
  });
});

describe('input files', () => {
  it.each([
    ['GIF', new Uint8Array([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 1, 0, 1, 0, 0, 0, 0, 0x3b])],
    ['BMP', new Uint8Array([0x42, 0x4d, 30, 0, 0, 0, 0, 0, 0, 0, 26, 0, 0, 0, 12, 0, 0, 0, 1, 0, 1, 0, 1, 0, 24, 0, 0, 0, 255, 0])],
    ['SVG', new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>')],
    ['PDF', new TextEncoder().encode('%PDF-1.7\n%\u00e2\u00e3\n')],
    ['TIFF', new Uint8Array([0x49, 0x49, 0x2a, 0x00, 8, 0, 0, 0, 0, 0])],
    ['HEIC', new Uint8Array([0, 0, 0, 24, 0x66, 0x74, 0x79, 0x70, 0x68, 0x65, 0x69, 0x63, 0, 0, 0, 0, 0x6d, 0x69, 0x66, 0x31, 0x68, 0x65, 0x69, 0x63])],
    ['empty', new Uint8Array(0)],
  ])('refuses %s with 422 UNSUPPORTED_FORMAT', async (_name, bytes) => {
    const { key } = await createTestUser({ plan: 'pro' });
    await expectFailure(await upload('/api/v1/convert', key, bytes, { format: 'png' }, 'image.png'), 422, 'UNSUPPORTED_FORMAT');
  });

  it('refuses a damaged file that claims a supported format, saying it is damaged', async () => {
    const { key } = await createTestUser({ plan: 'pro' });
    const response = await upload('/api/v1/convert', key, await corpus('png/pngsuite/xcsn0g01.png'), { format: 'webp' });
    const body = await expectFailure(response, 422, 'UNSUPPORTED_FORMAT');
    expect(body.error.message).toMatch(/damaged|truncated|corrupt/i);
  });

  it('refuses a truncated JPEG, which the decoder alone would fill with grey', async () => {
    const { key } = await createTestUser({ plan: 'pro' });
    const photo = await corpus('jpeg/camera/DSCN0010.jpg');
    for (const fraction of [0.6, 0.95]) {
      const cut = photo.subarray(0, Math.floor(photo.length * fraction));
      const body = await expectFailure(await upload('/api/v1/convert', key, cut, { format: 'png' }), 422, 'UNSUPPORTED_FORMAT');
      expect(body.error.message).toMatch(/damaged|truncated/);
      await expectFailure(await upload('/api/v1/remove-metadata', key, cut), 422, 'UNSUPPORTED_FORMAT');
    }
  });

  it('refuses an output the chosen format cannot hold, naming "format"', async () => {
    const { key } = await createTestUser({ plan: 'pro' });
    const wide = await encodeImage('png', gradient(20000, 2));
    const body = await expectFailure(await upload('/api/v1/convert', key, wide, { format: 'webp' }), 422, 'INVALID_PARAMETERS');
    expect(body.error.message).toMatch(/"format".*16383/);
    expect((await upload('/api/v1/convert', key, wide, { format: 'png' })).status).toBe(200);
  });

  it('refuses a resize whose derived side would pass 12000 pixels', async () => {
    const { key } = await createTestUser({ plan: 'pro' });
    const tall = await encodeImage('png', gradient(10, 1000));
    const body = await expectFailure(await upload('/api/v1/resize', key, tall, { width: '300' }), 422, 'INVALID_PARAMETERS');
    expect(body.error.message).toMatch(/"width".*300x30000/);
  });

  it('refuses a pixel bomb before decoding it, naming the limit', async () => {
    const { key } = await createTestUser({ plan: 'pro' });
    const body = await expectFailure(await upload('/api/v1/convert', key, pngHeaderOnly(30000, 30000), { format: 'jpg' }), 422, 'FILE_TOO_LARGE');
    expect(body.error.message).toMatch(/50 megapixels/);
  });

  it('refuses a resize whose output would exceed the pixel limit', async () => {
    const { key } = await createTestUser({ plan: 'pro' });
    const body = await expectFailure(await upload('/api/v1/resize', key, await encodeImage('png', gradient(4, 4)), { width: '12000', height: '12000', keep_aspect_ratio: 'false' }), 422, 'FILE_TOO_LARGE');
    expect(body.error.message).toMatch(/output/);
  });

  it('refuses a file over the plan size with FILE_TOO_LARGE, from Content-Length and while reading', async () => {
    const { key } = await createTestUser();
    const big = new Uint8Array(10 * 1024 * 1024 + 1);
    big.set([0xff, 0xd8, 0xff]);
    await expectFailure(await upload('/api/v1/convert', key, big, { format: 'png' }), 422, 'FILE_TOO_LARGE');
    const streamed = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('--b\r\nContent-Disposition: form-data; name="file"; filename="a.jpg"\r\n\r\n'));
        for (let i = 0; i < 11; i++) controller.enqueue(new Uint8Array(1024 * 1024));
        controller.close();
      },
    });
    const chunked = await api('/api/v1/convert', { method: 'POST', key, body: streamed, headers: { 'Content-Type': 'multipart/form-data; boundary=b' }, duplex: 'half' } as RequestInit);
    await expectFailure(chunked, 422, 'FILE_TOO_LARGE');
  });
});
