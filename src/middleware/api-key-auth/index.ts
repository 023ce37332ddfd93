import { createMiddleware } from 'hono/factory';
import { toAccount } from '../../account';
import { hashApiKey } from '../../auth/api-keys';
import { findUserByKeyHash, touchApiKey } from '../../db/users';
import type { AppEnv } from '../../env';
import { AppError } from '../../errors';

// last_used_at is informative: refreshing it once a minute spares most calls a D1 write.
const TOUCH_INTERVAL_MS = 60_000;

const unauthorized = () => new AppError('UNAUTHORIZED', 'A valid API key is required: send "Authorization: Bearer <API_KEY>".');

/** `Authorization: Bearer <key>`; missing, malformed, unknown and revoked keys all look the same. */
export const apiKeyAuth = createMiddleware<AppEnv>(async (c, next) => {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(c.req.header('Authorization') ?? '');
  if (!match || match[1].length > 200) throw unauthorized();
  const owner = await findUserByKeyHash(c.env.DB, await hashApiKey(match[1]));
  if (!owner) throw unauthorized();

  const now = c.get('clock')();
  c.set('account', toAccount(owner, now));
  const lastUsed = owner.key_last_used_at ? Date.parse(owner.key_last_used_at) : 0;
  if (now.getTime() - lastUsed >= TOUCH_INTERVAL_MS) c.executionCtx.waitUntil(touchApiKey(c.env.DB, owner.key_id, now));
  await next();
});
