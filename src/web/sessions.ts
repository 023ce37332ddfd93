import type { Context } from 'hono';
import { forgetSession } from '../auth/cached-lookups';
import { randomToken } from '../auth/encoding';
import { deleteSession, insertSession } from '../db/sessions';
import type { AppEnv } from '../env';
import { sha256Hex } from '../hex';
import { revokeAtGate } from '../user-gate/stub';
import { SESSION_LIFETIME_MS, sessionCookie } from './cookies';

/**
 * A new session for `userId`: always a fresh id (no fixation), its hash in D1, the id in the
 * cookie. A session this browser already had is deleted, not left behind.
 */
export async function startSession(c: Context<AppEnv>, userId: number): Promise<void> {
  const previous = c.get('session');
  if (previous) await deleteEverywhere(c, previous.idHash);
  const id = randomToken(32);
  const now = c.get('clock')();
  await insertSession(c.env.DB, {
    idHash: await sha256Hex(id),
    userId,
    csrfToken: randomToken(32),
    now,
    expiresAt: new Date(now.getTime() + SESSION_LIFETIME_MS),
  });
  sessionCookie.write(c, id);
}

/**
 * Deletes the session row, so the cookie is worthless even if it was copied: refused from the next
 * call on here and by the user's Durable Object (every converter call passes it), and by other
 * isolates' page caches within a minute.
 */
export async function endSession(c: Context<AppEnv>): Promise<void> {
  const session = c.get('session');
  if (session) await deleteEverywhere(c, session.idHash);
  sessionCookie.clear(c);
}

async function deleteEverywhere(c: Context<AppEnv>, idHash: string): Promise<void> {
  await deleteSession(c.env.DB, idHash);
  forgetSession(idHash);
  await revokeAtGate(c.env, c.get('account').userId, { kind: 'session', idHash }, c.get('clock')());
}

/** Where to go after logging in: only a path on this site (never `//host` or `/\host`), nothing a header cannot hold. */
export function safeNextPath(next: string | undefined): string {
  if (next && /^\/(?![/\\])[^\s\\\x00-\x1f\x7f]*$/.test(next) && next.length <= 200) return next;
  return '/account';
}

/** The address the request came from; on Cloudflare the edge sets CF-Connecting-IP itself. */
export function clientAddress(c: Context): string {
  return c.req.header('CF-Connecting-IP') ?? 'unknown';
}
