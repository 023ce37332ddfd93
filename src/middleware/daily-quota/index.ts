import { createMiddleware } from 'hono/factory';
import { nextUtcMidnight, releaseConversion, reserveConversion, utcDay } from '../../db/usage';
import type { AppEnv } from '../../env';
import { AppError } from '../../errors';

/**
 * Reserves one conversion before any work (one atomic D1 statement, so parallel calls
 * cannot overshoot) and gives it back unless the call succeeds: failed calls spend nothing.
 */
export const dailyQuota = createMiddleware<AppEnv>(async (c, next) => {
  const { userId, limits } = c.get('account');
  const limit = limits.dailyConversions;
  const now = new Date();
  const day = utcDay(now);
  const resetAt = nextUtcMidnight(now);
  const quotaHeaders = (remaining: number): Record<string, string> => ({
    'X-RateLimit-Limit': String(limit),
    'X-RateLimit-Remaining': String(remaining),
    'X-RateLimit-Reset': String(Math.floor(resetAt.getTime() / 1000)),
  });

  const used = await reserveConversion(c.env.DB, userId, day, limit);
  if (used === null) {
    throw new AppError(
      'DAILY_LIMIT_REACHED',
      `Daily limit reached: the free plan allows ${limit} conversions per day and 0 remain today. The quota resets at 00:00 UTC.`,
      undefined,
      { ...quotaHeaders(0), 'Retry-After': String(Math.ceil((resetAt.getTime() - now.getTime()) / 1000)) },
    );
  }

  await next();

  if (c.error || c.res.status !== 200) {
    await releaseConversion(c.env.DB, userId, day);
    if (limit !== null) for (const [name, value] of Object.entries(quotaHeaders(limit - used + 1))) c.res.headers.set(name, value);
  } else if (limit !== null) {
    for (const [name, value] of Object.entries(quotaHeaders(limit - used))) c.header(name, value);
  }
});
