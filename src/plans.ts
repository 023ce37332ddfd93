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

/**
 * "MB" in this service's limits is 2^20 bytes (MiB): a 10 MB plan takes 10,485,760 bytes. The
 * larger reading of the contract's "10 MB", so every file of 10,000,000 bytes passes as well.
 */
export const MEGABYTE = 1024 * 1024;

export function maxFileSizeBytes(limits: PlanLimits): number {
  return limits.maxFileSizeMb * MEGABYTE;
}

/** 10485760 -> "10,485,760" (no Intl: the same in every runtime). */
export function groupedDigits(value: number): string {
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** A Pro plan whose subscription_ends_at has passed is Free again. */
export function effectivePlan(plan: PlanName, subscriptionEndsAt: string | null, now: Date): PlanName {
  if (plan !== 'pro') return 'free';
  if (subscriptionEndsAt !== null && Date.parse(subscriptionEndsAt) <= now.getTime()) return 'free';
  return 'pro';
}
