import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { constantTimeEqualText, randomToken } from '../../auth/encoding';
import type { AppEnv } from '../../env';
import { AppError } from '../../errors';
import { anonymousCsrfCookie } from '../../web/cookies';

export const CSRF_FIELD = 'csrf_token';
export const CSRF_HEADER = 'X-CSRF-Token';

/**
 * The token a form of this page must carry: the session's own (synchronizer token) when
 * signed in, else a random one kept in a cookie (double submit), made on first use.
 */
export function csrfTokenFor(c: Context<AppEnv>): string {
  const session = c.get('session');
  if (session) return session.csrfToken;
  const existing = anonymousCsrfCookie.read(c);
  if (existing && existing.length >= 32) return existing;
  const token = randomToken();
  anonymousCsrfCookie.write(c, token);
  return token;
}

async function givenToken(c: Context<AppEnv>): Promise<string | undefined> {
  const header = c.req.header(CSRF_HEADER);
  if (header) return header;
  // Only the page's own url-encoded forms carry the token as a field; uploads send the header.
  if (!/^application\/x-www-form-urlencoded\b/i.test(c.req.header('Content-Type') ?? '')) return undefined;
  const field = (await c.req.parseBody())[CSRF_FIELD];
  return typeof field === 'string' ? field : undefined;
}

/**
 * Every state-changing web request must echo the token (behind hono/csrf's Origin check,
 * which catches cross-site posts even before this runs).
 */
export const csrfToken = createMiddleware<AppEnv>(async (c, next) => {
  const session = c.get('session');
  const expected = session ? session.csrfToken : anonymousCsrfCookie.read(c);
  const given = await givenToken(c);
  if (!expected || !given || !constantTimeEqualText(expected, given)) {
    throw new AppError('FORBIDDEN', 'This form has expired or did not come from this site. Reload the page and try again.');
  }
  await next();
});
