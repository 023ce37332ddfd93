import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { dailyUsed, nextUtcMidnight, releaseConversion, reserveConversion, utcDay } from '../../db/usage';
import type { AppEnv } from '../../env';
import { AppError } from '../../errors';

function quotaHeaders(limit: number, used: number, resetAt: Date): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(limit),
    'X-RateLimit-Remaining': String(Math.max(0, limit - used)),
    'X-RateLimit-Reset': String(Math.floor(resetAt.getTime() / 1000)),
  };
}

function succeeded(c: Context<AppEnv>, signal: AbortSignal): boolean {
  return !c.error && c.res.status === 200 && !signal.aborted;
}

/** The words of DAILY_LIMIT_REACHED, also shown by the converter page before it uploads anything. */
export function dailyLimitMessage(limit: number): string {
  return `Daily limit reached: the free plan allows ${limit} conversions per day and 0 remain today. The quota resets at 00:00 UTC.`;
}

/**
 * Every processing answer of a limited plan says where the daily quota stands, whatever the
 * answer: a success, a failure that spent nothing, a refusal of the request rate. Goes right
 * after authentication; the count is the one `dailyQuota` settled on, or today's from D1 when
 * the call was refused before reaching it.
 */
export const quotaHeadersOnAnswer = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  const { userId, limits } = c.get('account');
  const limit = limits.dailyConversions;
  if (limit === null) return;
  const now = c.get('clock')();
  const used = c.get('quotaUsed') ?? (await dailyUsed(c.env.DB, userId, utcDay(now)));
  for (const [name, value] of Object.entries(quotaHeaders(limit, used, nextUtcMidnight(now)))) c.res.headers.set(name, value);
});

/**
 * Reserves one conversion before any work (one atomic D1 statement, so parallel calls cannot
 * overshoot) and gives it back unless the call succeeds and the client is still there to get its
 * link: failed and abandoned calls spend nothing.
 */
export const dailyQuota = createMiddleware<AppEnv>(async (c, next) => {
  const { userId, limits } = c.get('account');
  const limit = limits.dailyConversions;
  const now = c.get('clock')();
  const day = utcDay(now);
  const resetAt = nextUtcMidnight(now);

  const used = await reserveConversion(c.env.DB, userId, day, limit);
  if (used === null) {
    c.set('quotaUsed', limit ?? 0);
    throw new AppError('DAILY_LIMIT_REACHED', dailyLimitMessage(limit ?? 0), undefined, {
      'Retry-After': String(Math.ceil((resetAt.getTime() - now.getTime()) / 1000)),
    });
  }

  // A client that disconnects cancels the request's own promises, so the reservation is given
  // back from the abort event under waitUntil, and the settlement below runs under waitUntil too.
  let released: Promise<void> | null = null;
  const release = () => (released ??= releaseConversion(c.env.DB, userId, day));
  const onAbort = () => c.executionCtx.waitUntil(release());
  const signal = c.get('clientSignal');
  signal.addEventListener('abort', onAbort);
  const settlement = next().then(
    async () => {
      const ok = succeeded(c, signal);
      if (!ok) await release();
      return ok;
    },
    async () => {
      await release();
      return false;
    },
  );
  c.executionCtx.waitUntil(settlement);
  const ok = await settlement.finally(() => signal.removeEventListener('abort', onAbort));
  c.set('quotaUsed', ok ? used : used - 1);
});
