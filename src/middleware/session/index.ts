import { createMiddleware } from 'hono/factory';
import { toAccount } from '../../account';
import { cachedSession } from '../../auth/cached-lookups';
import { sha256Hex } from '../../hex';
import type { AppEnv } from '../../env';
import { credentialRefused } from '../../auth/credentials';
import { sessionCookie } from '../../web/cookies';

// Session ids are 43 base64url characters; anything else is not worth a D1 lookup.
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/**
 * Reads the session cookie; sets `session` (null when signed out) and, when signed in, `account`.
 * The session comes from the isolate's cache (src/auth/cached-lookups.ts).
 */
export const loadSession = createMiddleware<AppEnv>(async (c, next) => {
  const id = sessionCookie.read(c);
  const now = c.get('clock')();
  const idHash = id && SESSION_ID.test(id) ? await sha256Hex(id) : null;
  const row = idHash ? await cachedSession(c.env.DB, idHash, now, (work) => c.executionCtx.waitUntil(work)) : null;
  if (row && idHash) {
    c.set('session', { idHash, csrfToken: row.csrf_token });
    c.set('account', toAccount(row, now, { kind: 'session', idHash }));
  } else {
    c.set('session', null);
    if (id) sessionCookie.clear(c);
  }
  await next();
});

/** Pages: a signed-out visitor is sent to log in and brought back afterwards. */
export const requireSessionPage = createMiddleware<AppEnv>(async (c, next) => {
  if (!c.get('session')) return c.redirect(`/login?next=${encodeURIComponent(c.req.path)}`, 303);
  await next();
});

/** The converter's JSON calls: the same 401 envelope as a missing API key. */
export const requireSessionApi = createMiddleware<AppEnv>(async (c, next) => {
  if (!c.get('session')) throw credentialRefused('session');
  await next();
});
