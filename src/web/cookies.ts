import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { CookieOptions } from 'hono/utils/cookie';

// Browsers keep Secure cookies away from plain-http localhost in some versions, and a local
// `npm run dev` is plain http: there the cookies go without Secure (and so without __Host-).
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export function isLocalRequest(c: Context): boolean {
  return LOCAL_HOSTS.has(new URL(c.req.url).hostname);
}

export const SESSION_LIFETIME_MS = 30 * 24 * 3_600_000;

/** A cookie that scripts cannot read, on this host only; `__Host-` prefixed wherever it can be Secure. */
function hostCookie(c: Context, sameSite: 'Lax' | 'Strict') {
  const local = isLocalRequest(c);
  const options: CookieOptions = { path: '/', httpOnly: true, sameSite, ...(local ? {} : { secure: true, prefix: 'host' as const }) };
  return {
    get: (name: string) => (local ? getCookie(c, name) : getCookie(c, name, 'host')),
    set: (name: string, value: string, maxAgeSeconds?: number) => setCookie(c, name, value, { ...options, maxAge: maxAgeSeconds }),
    remove: (name: string) => deleteCookie(c, name, options),
  };
}

// Lax, not Strict: a link to the account page from elsewhere should arrive signed in.
export const sessionCookie = {
  read: (c: Context) => hostCookie(c, 'Lax').get('session'),
  write: (c: Context, id: string) => hostCookie(c, 'Lax').set('session', id, SESSION_LIFETIME_MS / 1000),
  clear: (c: Context) => hostCookie(c, 'Lax').remove('session'),
};

/** Double-submit token for the forms shown before anyone is signed in (sign-up, log-in). */
export const anonymousCsrfCookie = {
  read: (c: Context) => hostCookie(c, 'Strict').get('csrf'),
  write: (c: Context, token: string) => hostCookie(c, 'Strict').set('csrf', token),
};

export const KEY_REVEAL_LIFETIME_MS = 10 * 60_000;

/** The AES key that opens a new API key's sealed copy in D1 (src/web/key-reveal.ts), for the page after the form post only. */
export const keyRevealCookie = {
  read: (c: Context) => hostCookie(c, 'Strict').get('key_reveal'),
  write: (c: Context, value: string) => hostCookie(c, 'Strict').set('key_reveal', value, KEY_REVEAL_LIFETIME_MS / 1000),
  clear: (c: Context) => hostCookie(c, 'Strict').remove('key_reveal'),
};
