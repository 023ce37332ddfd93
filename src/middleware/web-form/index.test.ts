import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../../env';
import { handleError } from '../../http/error-handler';
import { FORM_BODY_LIMIT, webForm } from '.';

const app = new Hono<AppEnv>().post('/form', webForm, (c) => c.json(c.get('form')));
app.onError(handleError);
const post = (body: BodyInit, contentType?: string) =>
  app.request('/form', { method: 'POST', body, headers: contentType ? { 'Content-Type': contentType } : {} });

describe('webForm', () => {
  it('reads a url-encoded form once, for the CSRF check and the handler', async () => {
    const response = await post('email=a%40b.cd&name=caf%C3%A9', 'application/x-www-form-urlencoded;charset=UTF-8');
    expect(await response.json()).toEqual({ email: 'a@b.cd', name: 'café' });
  });

  it('refuses other bodies and oversized forms with INVALID_PARAMETERS, not a 500', async () => {
    const multipart = new FormData();
    multipart.append('email', 'a@b.cd');
    for (const response of [
      await post(multipart),
      await post('x', 'multipart/form-data'),
      await post('{"email":"a@b.cd"}', 'application/json'),
      await post(`a=${'x'.repeat(FORM_BODY_LIMIT)}`, 'application/x-www-form-urlencoded'),
    ]) {
      expect(response.status).toBe(422);
      expect(await response.json()).toMatchObject({ error: { code: 'INVALID_PARAMETERS' } });
    }
  });

  it('stops counting a streamed body at the limit', async () => {
    const chunk = new TextEncoder().encode('a=' + 'x'.repeat(1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += chunk.length;
        if (sent > 10 * 1024 * 1024) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const response = await app.request('/form', {
      method: 'POST',
      body: stream,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      // @ts-expect-error: workerd needs to be told the body streams
      duplex: 'half',
    });
    expect(response.status).toBe(422);
    expect(sent).toBeLessThan(1024 * 1024);
  });
});
