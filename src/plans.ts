export type PlanName = 'free' | 'pro';

export interface PlanLimits {
  /** Successful processing calls per UTC day; null = unlimited. */
  dailyConversions: number | null;
  requestsPerSecond: number;
  maxConcurrent: number;
  maxFileSizeMb: number;
}

/** Values from image-api.md "Limits" and decisions.md (Free max_concurrent = 2). */
export const PLANS: Record<PlanName, PlanLimits> = {
  free: { dailyConversions: 15, requestsPerSecond: 2, maxConcurrent: 2, maxFileSizeMb: 10 },
  pro: { dailyConversions: null, requestsPerSecond: 10, maxConcurrent: 999, maxFileSizeMb: 50 },
};

export const MEGABYTE = 1024 * 1024;

/** A Pro plan whose subscription_ends_at has passed is Free again. */
export function effectivePlan(plan: PlanName, subscriptionEndsAt: string | null, now: Date): PlanName {
  if (plan !== 'pro') return 'free';
  if (subscriptionEndsAt !== null && Date.parse(subscriptionEndsAt) <= now.getTime()) return 'free';
  return 'pro';
}
