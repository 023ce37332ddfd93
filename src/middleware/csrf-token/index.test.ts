import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../../env';
import { handleError } from '../../http/error-handler';
import { webForm } from '../web-form';
import { csrfToken, csrfTokenFor } from '.';

const TOKEN = 'A'.repeat(43);

/** Signed in (the session's token) or not (the `csrf` cookie), as the session middleware would set it. */
function appWith(session: { csrfToken: string } | null) {
  const app = new Hono<AppEnv>();
  app.use('*', async (c, next) => {
    c.set('session', session && { idHash: 'h', csrfToken: session.csrfToken });
    await next();
  });
  app.get('/page', (c) => c.text(csrfTokenFor(c)));
  app.post('/form', webForm, csrfToken, (c) => c.text('done'));
  app.post('/upload', csrfToken, (c) => c.text('done'));
  app.onError(handleError);
  return app;
}

const form = (fields: Record<string, string>, headers: Record<string, string> = {}) => ({
  method: 'POST',
  body: new URLSearchParams(fields),
  headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
});

describe('csrfToken', () => {
  it("signed in: needs the session's own token, as a field or as the header", async () => {
    const app = appWith({ csrfToken: TOKEN });
    expect((await app.request('/form', form({ csrf_token: TOKEN }))).status).toBe(200);
    expect((await app.request('/upload', { method: 'POST', headers: { 'X-CSRF-Token': TOKEN } })).status).toBe(200);
    for (const attempt of [form({}), form({ csrf_token: 'B'.repeat(43) }), form({ csrf_token: TOKEN.slice(1) })]) {
      const response = await app.request('/form', attempt);
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ error: { code: 'FORBIDDEN' } });
    }
  });

  it('never reads an upload body for the token: uploads must send the header', async () => {
    const body = new FormData();
    body.append('csrf_token', TOKEN);
    expect((await appWith({ csrfToken: TOKEN }).request('/upload', { method: 'POST', body })).status).toBe(403);
  });

  it('signed out: the form must echo the csrf cookie it was given, and only a cookie this site could have set', async () => {
    const app = appWith(null);
    const page = await app.request('https://images.example.com/page');
    const cookie = page.headers.get('Set-Cookie')!;
    expect(cookie).toMatch(/^__Host-csrf=[A-Za-z0-9_-]{43}; .*HttpOnly; Secure; SameSite=Strict/);
    const token = await page.text();
    const sent = { Cookie: `__Host-csrf=${token}` };
    expect((await app.request('https://images.example.com/form', form({ csrf_token: token }, sent))).status).toBe(200);
    expect((await app.request('https://images.example.com/form', form({ csrf_token: 'x' }, sent))).status).toBe(403);
    expect((await app.request('https://images.example.com/form', form({ csrf_token: token }))).status).toBe(403);
    // A planted cookie of another shape is not accepted even when the field matches it.
    expect((await app.request('https://images.example.com/form', form({ csrf_token: 'planted' }, { Cookie: '__Host-csrf=planted' }))).status).toBe(403);
  });
});
