import { createMiddleware } from 'hono/factory';
import { toAccount } from '../../account';
import { hashApiKey } from '../../auth/api-keys';
import { cachedKeyOwner } from '../../auth/cached-lookups';
import { credentialRefused } from '../../auth/credentials';
import { touchApiKey } from '../../db/users';
import type { AppEnv } from '../../env';

// last_used_at is informative: refreshing it once a minute per key and isolate spares most calls a D1 write.
const TOUCH_INTERVAL_MS = 60_000;
const lastTouched = new Map<number, number>();

const unauthorized = () => credentialRefused('key');

/**
 * `Authorization: Bearer <key>`; missing, malformed, unknown and revoked keys all look the same.
 * The key's owner comes from the isolate's cache (src/auth/cached-lookups.ts), so a warm call waits
 * for no store here.
 */
export const apiKeyAuth = createMiddleware<AppEnv>(async (c, next) => {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(c.req.header('Authorization') ?? '');
  if (!match || match[1].length > 200) throw unauthorized();
  const now = c.get('clock')();
  const background = (work: Promise<unknown>) => c.executionCtx.waitUntil(work);
  const owner = await cachedKeyOwner(c.env.DB, await hashApiKey(match[1]), now, background);
  if (!owner) throw unauthorized();

  c.set('account', toAccount(owner, now, { kind: 'key', keyId: owner.key_id }));
  const lastUsed = Math.max(lastTouched.get(owner.key_id) ?? 0, owner.key_last_used_at ? Date.parse(owner.key_last_used_at) : 0);
  if (now.getTime() - lastUsed >= TOUCH_INTERVAL_MS) {
    lastTouched.set(owner.key_id, now.getTime());
    if (lastTouched.size > 10_000) lastTouched.delete(lastTouched.keys().next().value!);
    background(touchApiKey(c.env.DB, owner.key_id, now));
  }
  await next();
});
