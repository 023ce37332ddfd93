import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { secureHeaders } from 'hono/secure-headers';
import type { AppEnv } from '../env';
import { csrfTokenFor } from '../middleware/csrf-token';
import { loadSession } from '../middleware/session';
import type { PageFrame } from './layout';
import { ErrorPage } from './pages/error';

/** Who is signed in, and the session's token for the log-out form (signed out: no form, no token). */
export function frameOf(c: Context<AppEnv>): PageFrame {
  const session = c.get('session');
  return { email: session ? c.get('account').email : null, csrfToken: session?.csrfToken ?? '' };
}

/** For the sign-up and log-in forms: a signed-out visitor gets the double-submit cookie only here. */
export function signInFrameOf(c: Context<AppEnv>): PageFrame {
  return { ...frameOf(c), csrfToken: csrfTokenFor(c) };
}

/** A field of the page's form (web-form middleware) as text; missing, or a file where text belongs, reads as ''. */
export function textField(c: Context<AppEnv>, name: string): string {
  const value = c.get('form')?.[name];
  return typeof value === 'string' ? value : '';
}

// Swagger UI sets style attributes; no other page needs inline styles.
const styleSources = (c: Context<AppEnv>) => (c.req.path === '/docs' ? "'self' 'unsafe-inline'" : "'self'");

// Result previews come from the download host, which SITE_URL may put elsewhere.
const imageSources = (c: Context<AppEnv>) => ["'self'", 'data:', 'blob:', c.get('settings').siteUrl].filter(Boolean).join(' ');

const pageHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: [styleSources],
    imgSrc: [imageSources],
    objectSrc: ["'none'"],
    baseUri: ["'self'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
  xFrameOptions: 'DENY',
});

/**
 * Every web page: who is signed in, failures shown as a page rather than JSON, a strict
 * Content-Security-Policy, and nothing personal kept in shared caches.
 */
export const webPage = createMiddleware<AppEnv>(async (c, next) => {
  c.set('errorPage', (error, status, headers) => {
    headers.set('Content-Type', 'text/html; charset=utf-8');
    return c.html(<ErrorPage frame={frameOf(c)} status={status} message={error.message} requestId={c.get('requestId')} />, status as 400, Object.fromEntries(headers));
  });
  await loadSession(c, async () => {
    await pageHeaders(c, next);
  });
  c.header('Cache-Control', 'no-store');
});
