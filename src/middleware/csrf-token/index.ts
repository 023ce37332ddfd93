import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { constantTimeEqualText, randomToken } from '../../auth/encoding';
import type { AppEnv } from '../../env';
import { AppError } from '../../errors';
import { anonymousCsrfCookie } from '../../web/cookies';

export const CSRF_FIELD = 'csrf_token';
export const CSRF_HEADER = 'X-CSRF-Token';

// Tokens are made by randomToken(32); a cookie of any other shape was not set by this site.
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/**
 * The token a form of this page must carry: the session's own (synchronizer token) when
 * signed in, else a random one kept in a cookie (double submit), made on first use.
 */
export function csrfTokenFor(c: Context<AppEnv>): string {
  const session = c.get('session');
  if (session) return session.csrfToken;
  const existing = anonymousCsrfCookie.read(c);
  if (existing && TOKEN_SHAPE.test(existing)) return existing;
  const token = randomToken();
  anonymousCsrfCookie.write(c, token);
  return token;
}

/**
 * Every state-changing web request must echo the token: forms in their `csrf_token` field
 * (read by the web-form middleware), the converter's uploads in the X-CSRF-Token header, so
 * that an upload's body is never parsed here. hono/csrf's Origin check runs before this.
 */
export const csrfToken = createMiddleware<AppEnv>(async (c, next) => {
  const session = c.get('session');
  const expected = session ? session.csrfToken : anonymousCsrfCookie.read(c);
  const field = c.get('form')?.[CSRF_FIELD];
  const given = c.req.header(CSRF_HEADER) ?? (typeof field === 'string' ? field : undefined);
  if (!expected || !TOKEN_SHAPE.test(expected) || !given || !constantTimeEqualText(expected, given)) {
    throw new AppError('FORBIDDEN', 'This form has expired or did not come from this site. Reload the page and try again.');
  }
  await next();
});
