import { createMiddleware } from 'hono/factory';
import { toAccount } from '../../account';
import { sha256Hex } from '../../hex';
import { findLiveSession } from '../../db/sessions';
import type { AppEnv } from '../../env';
import { AppError } from '../../errors';
import { sessionCookie } from '../../web/cookies';

// Session ids are 43 base64url characters; anything else is not worth a D1 lookup.
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** Reads the session cookie; sets `session` (null when signed out) and, when signed in, `account`. */
export const loadSession = createMiddleware<AppEnv>(async (c, next) => {
  const id = sessionCookie.read(c);
  const now = c.get('clock')();
  const idHash = id && SESSION_ID.test(id) ? await sha256Hex(id) : null;
  const row = idHash ? await findLiveSession(c.env.DB, idHash, now) : null;
  if (row && idHash) {
    c.set('session', { idHash, csrfToken: row.csrf_token });
    c.set('account', toAccount(row, now));
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
  if (!c.get('session')) throw new AppError('UNAUTHORIZED', 'You are signed out: log in again to convert images.');
  await next();
});
