import type { Credential } from './auth/credentials';
import type { UserRow } from './db/users';
import type { Account } from './env';
import { effectivePlan, maxFileSizeBytes, PLANS } from './plans';

/** The caller as every handler sees it, whether they came with an API key or a session. */
export function toAccount(user: UserRow, now: Date, credential: Credential): Account {
  const plan = effectivePlan(user.plan, user.subscription_ends_at, now);
  return { userId: user.id, email: user.email, plan, subscriptionEndsAt: user.subscription_ends_at, limits: PLANS[plan], credential };
}

/** The Account object of image-api.md: what `GET /api/v1/me` returns and the account page shows; `used` is today's count. */
export function accountSummary(account: Account, used: number) {
  const { email, plan, subscriptionEndsAt, limits } = account;
  const max = limits.dailyConversions;
  return {
    user: { email, plan, is_pro: plan === 'pro', subscription_ends_at: subscriptionEndsAt },
    quota: {
      is_unlimited: max === null,
      daily_used: used,
      daily_remaining: max === null ? null : Math.max(0, max - used),
      daily_max: max,
      max_file_size_mb: limits.maxFileSizeMb,
      max_file_size_bytes: maxFileSizeBytes(limits),
      max_concurrent: limits.maxConcurrent,
    },
    rate_limit: { requests_per_second: limits.requestsPerSecond },
  };
}

export type AccountSummary = ReturnType<typeof accountSummary>;
