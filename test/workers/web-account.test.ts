import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { api, clockedClient, createTestUser, download, expectFailure, json, ManualClock, upload, usedToday } from './helpers';
import { encodeImage, gradient } from './images';
import { alertText, decodeEntities, uniqueEmail, WebClient } from './web-client';

const PASSWORD = 'a long enough passphrase';
/** Page and API share the user's 2 requests per second (Free): tests that make more calls move the clock between pairs of them. */
function onManualClock() {
  const clock = new ManualClock();
  const client = clockedClient(clock);
  return { ...client, nextRateWindow: () => clock.advance(1050) };
}

async function signedIn(options: { usedToday?: number; fetcher?: (url: string, init?: RequestInit) => Promise<Response> } = {}) {
  const owner = await createTestUser({ usedToday: options.usedToday });
  const browser = new WebClient(undefined, undefined, options.fetcher);
  expect((await browser.signUp(owner.email, PASSWORD, { api_key: owner.key })).status).toBe(303);
  return { browser, owner };
}

async function liveKeyNames(userId: number): Promise<string[]> {
  const { results } = await env.DB.prepare('SELECT name FROM api_keys WHERE user_id = ?1 AND revoked_at IS NULL ORDER BY id').bind(userId).all<{ name: string }>();
  return results.map((row) => row.name);
}

/** What the converter page's script sends: the form to /app/v1/<operation> with the page's token. */
async function convertInPage(browser: WebClient, fields: Record<string, string>, file: Uint8Array, operation = 'convert', token?: string | null) {
  const form = new FormData();
  form.append('file', new File([file], 'picture.png'));
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  const headers: Record<string, string> = { Origin: browser.origin };
  const csrf = token === undefined ? await browser.csrfToken('/convert') : token;
  if (csrf !== null) headers['X-CSRF-Token'] = csrf;
  return browser.request(`/app/v1/${operation}`, { method: 'POST', body: form, headers });
}

describe('API keys on the account page', () => {
  it('creates a named key shown exactly once, on the page the form redirects to, which then works against the API', async () => {
    const { browser, owner } = await signedIn();
    const created = await browser.postForm('/account/keys', { name: 'laptop' });
    expect(created.status).toBe(303);
    expect(created.headers.get('Location')).toBe('/account#new-key');
    expect(await created.text()).not.toMatch(/imgk_/);
    const shown = await browser.get('/account');
    expect(shown.headers.get('Cache-Control')).toBe('no-store');
    const page = await shown.text();
    const key = /<code id="new-api-key">(imgk_[0-9A-Za-z]{32})<\/code>/.exec(page)?.[1];
    expect(key).toBeDefined();
    expect(page).toContain('>Copy</button>');

    const me = await api('/api/v1/me', { key });
    expect(me.status).toBe(200);
    expect((await json(me)).data.user.email).toBe(owner.email);

    // Reloading the page shows the key no more, and makes no second one.
    const reloaded = await (await browser.get('/account')).text();
    expect(reloaded).not.toContain(key!);
    expect(reloaded).not.toContain('id="new-api-key"');
    expect(reloaded).toContain(`<code>${key!.slice(0, 12)}…</code>`);
    expect(reloaded).toContain('<td data-label="Name">laptop</td>');
    expect(await liveKeyNames(owner.id)).toEqual(['test', 'laptop']);
    // Neither the key nor anything that opens it alone is stored: its hash, and nothing waiting to be shown.
    const stored = await env.DB.prepare('SELECT key_hash FROM api_keys WHERE name = ?1 AND user_id = ?2').bind('laptop', owner.id).first<{ key_hash: string }>();
    expect(stored?.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(await env.DB.prepare('SELECT COUNT(*) AS n FROM key_reveals').first<{ n: number }>()).toEqual({ n: 0 });
  });

  it('keeps the waiting key sealed: the stored copy is ciphertext, and the cookie alone or another session cannot open it', async () => {
    const { browser, owner } = await signedIn();
    await browser.postForm('/account/keys', { name: 'sealed' });
    const sealed = await env.DB.prepare('SELECT r.sealed FROM key_reveals r JOIN sessions s ON s.id_hash = r.session_id_hash WHERE s.user_id = ?1').bind(owner.id).first<{ sealed: string }>();
    expect(sealed?.sealed).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(atob(sealed!.sealed)).not.toMatch(/imgk_/);
    const revealCookie = [...browser.cookies].find(([name]) => name.endsWith('key_reveal'));
    expect(revealCookie).toBeDefined();
    expect(revealCookie![1]).not.toMatch(/imgk_/);

    // The same user signed in elsewhere, holding the cookie but not the session, sees no key.
    const elsewhere = new WebClient();
    expect((await elsewhere.logIn(owner.email, PASSWORD)).status).toBe(303);
    elsewhere.cookies.set(revealCookie![0], revealCookie![1]);
    expect(await (await elsewhere.get('/account')).text()).not.toContain('id="new-api-key"');
    // The creating browser still gets it once.
    expect(await (await browser.get('/account')).text()).toContain('id="new-api-key"');
  });

  it('never lets parallel creations pass the 25-key cap', async () => {
    const { browser, owner } = await signedIn(); // one key already
    const token = await browser.csrfToken('/account');
    const responses = await Promise.all(Array.from({ length: 40 }, (_, i) => browser.postForm('/account/keys', { name: `parallel ${i}` }, { token })));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 303)).toHaveLength(24);
    expect(statuses.filter((status) => status === 422)).toHaveLength(16);
    expect(await liveKeyNames(owner.id)).toHaveLength(25);
    const refused = await responses.find((response) => response.status === 422)!.text();
    expect(alertText(refused)).toBe('You have 25 keys: revoke one before creating another.');
  });

  it('revokes a key so that it stops working at once', async () => {
    const { browser, owner } = await signedIn();
    expect((await api('/api/v1/me', { key: owner.key })).status).toBe(200);
    const keyId = (await env.DB.prepare('SELECT id FROM api_keys WHERE user_id = ?1').bind(owner.id).first<{ id: number }>())!.id;
    const revoked = await browser.postForm(`/account/keys/${keyId}/revoke`, {});
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get('Location')).toBe('/account?notice=revoked');
    await expectFailure(await api('/api/v1/me', { key: owner.key }), 401, 'UNAUTHORIZED');
    const page = await (await browser.get('/account?notice=revoked')).text();
    expect(page).toContain('The key was revoked.');
    expect(page).not.toContain('<td data-label="Name">test</td>');
  });

  it("cannot revoke someone else's key", async () => {
    const { browser } = await signedIn();
    const victim = await createTestUser();
    const keyId = (await env.DB.prepare('SELECT id FROM api_keys WHERE user_id = ?1').bind(victim.id).first<{ id: number }>())!.id;
    const response = await browser.postForm(`/account/keys/${keyId}/revoke`, {});
    expect(response.headers.get('Location')).toBe('/account?notice=not-found');
    expect((await api('/api/v1/me', { key: victim.key })).status).toBe(200);
  });

  it('refuses an empty or overlong name with a message', async () => {
    const { browser, owner } = await signedIn();
    for (const name of ['   ', 'x'.repeat(65)]) {
      const response = await browser.postForm('/account/keys', { name });
      expect(response.status).toBe(422);
      expect(alertText(await response.text())).toBe('Give the key a name of 1 to 64 characters.');
    }
    expect(await liveKeyNames(owner.id)).toEqual(['test']);
  });
});

describe('CSRF protection on every form post', () => {
  it('refuses a post without the token, with a wrong token, or from another site, and changes nothing', async () => {
    const { browser, owner } = await signedIn();
    const attempts = [
      await browser.postForm('/account/keys', { name: 'no-token' }, { token: null }),
      await browser.postForm('/account/keys', { name: 'wrong-token' }, { token: 'x'.repeat(43) }),
      await browser.postForm('/account/keys', { name: 'cross-site' }, { origin: 'https://evil.example' }),
      await browser.postForm('/account/keys', { name: 'no-origin' }, { origin: null }),
    ];
    for (const response of attempts) {
      expect(response.status).toBe(403);
      expect(response.headers.get('Content-Type')).toMatch(/text\/html/);
      expect(alertText(await response.text())).toMatch(/did not come from this site|not sent from this site/);
    }
    expect(await liveKeyNames(owner.id)).toEqual(['test']);
  });

  it('guards log-out, revoking, sign-up and log-in too', async () => {
    const { browser, owner } = await signedIn();
    const keyId = (await env.DB.prepare('SELECT id FROM api_keys WHERE user_id = ?1').bind(owner.id).first<{ id: number }>())!.id;
    expect((await browser.postForm(`/account/keys/${keyId}/revoke`, {}, { token: null })).status).toBe(403);
    expect((await browser.postForm('/logout', {}, { token: null })).status).toBe(403);
    expect((await browser.get('/account')).status).toBe(200);
    expect((await api('/api/v1/me', { key: owner.key })).status).toBe(200);

    const visitor = new WebClient();
    expect((await visitor.postForm('/signup', { email: uniqueEmail(), password: PASSWORD }, { token: null })).status).toBe(403);
    expect((await visitor.postForm('/login', { email: owner.email, password: PASSWORD }, { token: null })).status).toBe(403);
    // A token from another browser's cookie does not fit this one's.
    const other = new WebClient();
    const othersToken = await other.csrfToken('/signup');
    await visitor.get('/signup');
    expect((await visitor.postForm('/signup', { email: uniqueEmail(), password: PASSWORD }, { token: othersToken })).status).toBe(403);
  });
});

describe('the converter spends the same quota as the API', () => {
  it('converts through the page with the session and its token, and the result is listed on the account page', async () => {
    const { browser, owner } = await signedIn();
    const png = await encodeImage('png', gradient(40, 30));
    const response = await convertInPage(browser, { format: 'webp' }, png);
    expect(response.status).toBe(200);
    const result = (await json(response)).data;
    expect(result).toMatchObject({ format: 'webp', width: 40, height: 30, filename: 'picture.webp' });
    expect(response.headers.get('X-RateLimit-Remaining')).toBe('14');
    expect(await usedToday(owner.id)).toBe(1);
    const file = await download(result.download_url);
    expect(new TextDecoder().decode((await file.arrayBuffer()).slice(8, 12))).toBe('WEBP');

    const page = await (await browser.get('/account')).text();
    expect(decodeEntities(page)).toContain(`href="${result.download_url}" download="picture.webp">picture.webp</a>`);
    expect(page).toContain('<dt>Used today</dt><dd>1 of 15 conversions');
  });

  it('refuses the 16th conversion of the day in the page and through the API alike', async () => {
    const { upload, fetch, nextRateWindow } = onManualClock();
    const { browser, owner } = await signedIn({ usedToday: 14, fetcher: fetch });
    const png = await encodeImage('png', gradient(16, 16));
    expect((await convertInPage(browser, { width: '8' }, png, 'resize')).status).toBe(200);
    nextRateWindow();
    const inPage = await expectFailure(await convertInPage(browser, { format: 'jpg' }, png), 429, 'DAILY_LIMIT_REACHED');
    const viaApi = await expectFailure(await upload('/api/v1/convert', owner.key, png, { format: 'jpg' }), 429, 'DAILY_LIMIT_REACHED');
    expect(inPage.error.message).toBe(viaApi.error.message);
    expect(await usedToday(owner.id)).toBe(15);
  });

  it('answers the same errors as the API and spends nothing on them', async () => {
    const { upload, fetch, nextRateWindow } = onManualClock();
    const { browser, owner } = await signedIn({ fetcher: fetch });
    const notAnImage = new TextEncoder().encode('GIF89a this is not one of the four formats');
    const unsupported = await expectFailure(await convertInPage(browser, { format: 'png' }, notAnImage), 422, 'UNSUPPORTED_FORMAT');
    const sameViaApi = await expectFailure(await upload('/api/v1/convert', owner.key, notAnImage, { format: 'png' }), 422, 'UNSUPPORTED_FORMAT');
    expect(unsupported.error.message).toBe(sameViaApi.error.message);
    nextRateWindow();
    const tooLarge = await expectFailure(await convertInPage(browser, { format: 'png' }, new Uint8Array(10 * 1024 * 1024 + 1)), 422, 'FILE_TOO_LARGE');
    expect(tooLarge.error.message).toBe('The file is larger than the 10 MB (10,485,760 bytes) your plan allows.');
    expect(await usedToday(owner.id)).toBe(0);
  });

  it('needs the page token and a live session; both failures are JSON, not pages', async () => {
    const { browser } = await signedIn();
    const png = await encodeImage('png', gradient(8, 8));
    await expectFailure(await convertInPage(browser, { format: 'webp' }, png, 'convert', null), 403, 'FORBIDDEN');
    const signedOut = new WebClient();
    await expectFailure(await convertInPage(signedOut, { format: 'webp' }, png, 'convert', 'x'.repeat(43)), 401, 'UNAUTHORIZED');
    // An API key is no way in: this door is for the page only.
    const owner = await createTestUser();
    const form = new FormData();
    form.append('file', new File([png], 'a.png'));
    form.append('format', 'webp');
    const withKey = await api('/app/v1/convert', { method: 'POST', body: form, key: owner.key, headers: { Origin: 'http://api.test' } });
    await expectFailure(withKey, 401, 'UNAUTHORIZED');
  });
});

describe('pages', () => {
  it('sends a signed-out visitor to log in, and back afterwards', async () => {
    for (const path of ['/account', '/convert']) {
      const response = await new WebClient().get(path);
      expect(response.status).toBe(303);
      expect(response.headers.get('Location')).toBe(`/login?next=${encodeURIComponent(path)}`);
    }
  });

  it('serves every page as HTML with a strict CSP, labelled inputs and no cache', async () => {
    const { browser } = await signedIn();
    const visitor = new WebClient();
    const pages = [
      [visitor, '/'],
      [visitor, '/signup'],
      [visitor, '/login'],
      [visitor, '/docs'],
      [browser, '/account'],
      [browser, '/convert'],
    ] as const;
    for (const [client, path] of pages) {
      const response = await client.get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('Content-Type')).toMatch(/^text\/html/);
      expect(response.headers.get('Cache-Control')).toBe('no-store');
      expect(response.headers.get('Content-Security-Policy')).toMatch(/script-src 'self';/);
      expect(response.headers.get('Content-Security-Policy')).toMatch(/frame-ancestors 'none'/);
      const html = await response.text();
      expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
      // Every visible control has a label: <label for="its id"> with text, or a <label> around it.
      for (const control of html.match(/<(input|select)\b[^>]*>/g) ?? []) {
        if (/type="(hidden|submit)"/.test(control)) continue;
        const id = /\bid="([^"]+)"/.exec(control)?.[1];
        const before = html.slice(0, html.indexOf(control));
        const wrapped = before.lastIndexOf('<label') > before.lastIndexOf('</label>');
        expect(wrapped || (id !== undefined && new RegExp(`<label[^>]*for="${id}"[^>]*>[^<]+</label>`).test(html)), `${path}: ${control}`).toBe(true);
      }
      // No script or stylesheet from another host.
      expect(html).not.toMatch(/<(script|link)[^>]+(src|href)="(https?:)?\/\//);
    }
  });

  it('loads Swagger UI for /docs from this site and points it at the OpenAPI document', async () => {
    const html = await (await new WebClient().get('/docs')).text();
    expect(html).toContain('<script src="/docs/assets/swagger-ui-bundle.js"');
    expect(html).toContain('<link rel="stylesheet" href="/docs/assets/swagger-ui.css"/>');
    expect(html).toContain('data-url="/api/v1/openapi.json"');
  });

  it('escapes what users typed', async () => {
    const { browser } = await signedIn();
    await browser.postForm('/account/keys', { name: '<img src=x onerror=alert(1)>' });
    const created = await (await browser.get('/account')).text();
    expect(created).toContain('id="new-api-key"');
    expect(created).not.toContain('<img src=x');
    expect(created).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });

  it('API paths keep answering JSON envelopes, also for errors', async () => {
    await expectFailure(await api('/nothing-here'), 404, 'NOT_FOUND');
    const index = await api('/api/v1');
    expect((await index.json()) as object).toMatchObject({ openapi: '/api/v1/openapi.json', docs: '/docs' });
  });
});
