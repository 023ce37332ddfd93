import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { nextUtcMidnight } from '../../db/usage';
import type { AppEnv } from '../../env';
import { AppError } from '../../errors';
import type { Admission } from '../../user-gate';
import { userGateOf } from '../../user-gate/stub';
import { credentialRefused } from '../../auth/credentials';
import { callerFacts, GateTicket } from './ticket';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** The words of DAILY_LIMIT_REACHED, also shown by the converter page before it uploads anything. */
export function dailyLimitMessage(limit: number): string {
  return `Daily limit reached: the free plan allows ${limit} conversions per day and 0 remain today. The quota resets at 00:00 UTC.`;
}

export function dailyLimitReached(c: Context<AppEnv>): AppError {
  const limit = c.get('account').limits.dailyConversions ?? 0;
  const now = c.get('clock')();
  return new AppError('DAILY_LIMIT_REACHED', dailyLimitMessage(limit), undefined, {
    'Retry-After': String(Math.ceil((nextUtcMidnight(now).getTime() - now.getTime()) / 1000)),
  });
}

function refusal(c: Context<AppEnv>, admission: Exclude<Admission, { admitted: true }>): AppError {
  const { plan, limits, credential } = c.get('account');
  switch (admission.reason) {
    case 'unauthorized':
      return credentialRefused(credential.kind);
    case 'quota':
      return dailyLimitReached(c);
    case 'rate':
      return new AppError('RATE_LIMIT_EXCEEDED', `Too many requests: the ${plan} plan allows ${limits.requestsPerSecond} requests per second.`, undefined, {
        'Retry-After': String(admission.retryAfterSeconds),
      });
    case 'concurrency':
      return new AppError('RATE_LIMIT_EXCEEDED', `Too many concurrent operations: the ${plan} plan allows ${limits.maxConcurrent} at a time.`, undefined, {
        'Retry-After': '1',
      });
  }
}

async function admit(c: Context<AppEnv>, processing: { reserve: boolean } | null) {
  const { limits, userId } = c.get('account');
  const caller = callerFacts(c);
  const admission = await userGateOf(c.env, userId).admit({
    ...caller,
    requestsPerSecond: limits.requestsPerSecond,
    maxConcurrent: processing ? limits.maxConcurrent : null,
    reserve: processing?.reserve ? { dailyLimit: limits.dailyConversions } : undefined,
  });
  if ('used' in admission) c.set('quotaUsed', admission.used);
  if (!admission.admitted) throw refusal(c, admission);
  return { caller, admission };
}

/**
 * Calls that process no image (GET /me): the request rate, one call to the user's Durable Object,
 * which also tells today's count.
 */
export const rateOnly = createMiddleware<AppEnv>(async (c, next) => {
  await admit(c, null);
  await next();
});

function succeeded(c: Context<AppEnv>): boolean {
  return !c.error && c.res.status === 200 && !c.get('clientSignal').aborted;
}

/**
 * Processing calls: rate, concurrency slot and the day's conversion in one call to the user's
 * Durable Object before any work (the conversion waits for the Idempotency-Key's claim when there
 * is one: the call may be a replay). The slot goes back after the answer, and the conversion is
 * spent only if the call succeeded and its client is still there to get the link; a disconnect
 * gives both back from the abort event, under waitUntil, since a deployment then cancels the
 * request's own promises. A keyed call records its answer before it is sent, so that a retry
 * arriving the moment it is received is replayed, not told the key is busy.
 */
export const processingGate = createMiddleware<AppEnv>(async (c, next) => {
  const keyed = c.req.header(IDEMPOTENCY_HEADER) !== undefined;
  const { caller, admission } = await admit(c, { reserve: !keyed });
  const ticket = GateTicket.of(c, caller, (admission as { leaseId: string }).leaseId, { used: admission.used, reserved: !keyed });
  c.set('ticket', ticket);
  const signal = c.get('clientSignal');
  const onAbort = () => c.executionCtx.waitUntil(ticket.finish(false));
  signal.addEventListener('abort', onAbort);
  try {
    await next();
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
  const charged = succeeded(c) && ticket.reserved;
  c.set('quotaUsed', charged || !ticket.reserved ? ticket.used : ticket.used - 1);
  if (charged && ticket.claimedKey !== null) {
    const response = await c.res.clone().text();
    const expiresAt = Date.parse((JSON.parse(response) as { data: { expires_at: string } }).data.expires_at);
    await ticket.finish(true, { response, expiresAt });
  } else {
    c.executionCtx.waitUntil(ticket.finish(charged));
  }
});

function quotaHeaders(limit: number, used: number, resetAt: Date): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(limit),
    'X-RateLimit-Remaining': String(Math.max(0, limit - used)),
    'X-RateLimit-Reset': String(Math.floor(resetAt.getTime() / 1000)),
  };
}

/**
 * Every processing answer of a limited plan says where the daily quota stands, whatever the
 * answer: a success, a failure that spent nothing, a refusal of the request rate. Goes right after
 * authentication; the count is the one the user's Durable Object gave this call.
 */
export const quotaHeadersOnAnswer = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  const limit = c.get('account').limits.dailyConversions;
  const used = c.get('quotaUsed');
  if (limit === null || used === undefined) return;
  for (const [name, value] of Object.entries(quotaHeaders(limit, used, nextUtcMidnight(c.get('clock')())))) c.res.headers.set(name, value);
});
