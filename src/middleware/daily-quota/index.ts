import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { nextUtcMidnight, releaseConversion, reserveConversion, utcDay } from '../../db/usage';
import type { AppEnv } from '../../env';
import { AppError } from '../../errors';

function quotaHeaders(limit: number, remaining: number, resetAt: Date): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(limit),
    'X-RateLimit-Remaining': String(remaining),
    'X-RateLimit-Reset': String(Math.floor(resetAt.getTime() / 1000)),
  };
}

function succeeded(c: Context<AppEnv>): boolean {
  return !c.error && c.res.status === 200;
}

/**
 * Reserves one conversion before any work (one atomic D1 statement, so parallel calls
 * cannot overshoot) and gives it back unless the call succeeds: failed calls spend nothing.
 */
export const dailyQuota = createMiddleware<AppEnv>(async (c, next) => {
  const { userId, limits } = c.get('account');
  const limit = limits.dailyConversions;
  const now = c.get('clock')();
  const day = utcDay(now);
  const resetAt = nextUtcMidnight(now);

  const used = await reserveConversion(c.env.DB, userId, day, limit);
  if (used === null) {
    throw new AppError(
      'DAILY_LIMIT_REACHED',
      `Daily limit reached: the free plan allows ${limit} conversions per day and 0 remain today. The quota resets at 00:00 UTC.`,
      undefined,
      { ...quotaHeaders(limit ?? 0, 0, resetAt), 'Retry-After': String(Math.ceil((resetAt.getTime() - now.getTime()) / 1000)) },
    );
  }

  // The settlement runs under waitUntil so a client that disconnects mid-call (which cancels
  // the request's own promises) still gets its reservation back.
  const settled = next().then(
    () => succeeded(c),
    () => false,
  );
  const settlement = settled.then(async (ok) => {
    if (!ok) await releaseConversion(c.env.DB, userId, day);
    return ok;
  });
  c.executionCtx.waitUntil(settlement);
  const ok = await settlement;
  if (limit !== null) {
    for (const [name, value] of Object.entries(quotaHeaders(limit, ok ? limit - used : limit - used + 1, resetAt))) c.res.headers.set(name, value);
  }
});
