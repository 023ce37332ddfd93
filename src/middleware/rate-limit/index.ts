import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../../env';
import { AppError } from '../../errors';

/**
 * Per-user request rate (every authenticated /api/v1 call) and, for processing calls,
 * a concurrency slot held until the response is ready. Both live in the user's own
 * Durable Object, so they hold across Worker isolates and locations.
 */
export function rateLimit(options: { holdsSlot: boolean }) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const { userId, limits, plan } = c.get('account');
    const limiter = c.env.RATE_LIMITER.get(c.env.RATE_LIMITER.idFromName(`user:${userId}`));
    const admission = await limiter.admit({
      requestsPerSecond: limits.requestsPerSecond,
      maxConcurrent: options.holdsSlot ? limits.maxConcurrent : null,
      now: c.get('clock')().getTime(),
    });
    if (!admission.admitted) {
      const message =
        admission.reason === 'rate'
          ? `Too many requests: the ${plan} plan allows ${limits.requestsPerSecond} requests per second.`
          : `Too many concurrent operations: the ${plan} plan allows ${limits.maxConcurrent} at a time.`;
      throw new AppError('RATE_LIMIT_EXCEEDED', message, undefined, { 'Retry-After': String(admission.retryAfterSeconds) });
    }
    const { leaseId } = admission;
    if (!leaseId) return next();

    // waitUntil: the slot is given back even if the client has gone away meanwhile, and a
    // failing release (e.g. the object restarting) cannot turn a finished call into an error.
    const finished = next();
    const released = finished
      .catch(() => undefined)
      .then(() => limiter.release(leaseId))
      .catch((error) => console.error('releasing a concurrency slot failed:', error));
    c.executionCtx.waitUntil(released);
    await finished;
    await released;
  });
}
