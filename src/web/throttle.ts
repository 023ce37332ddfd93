import { blockedUntil, clearFailures, recordFailure, type ThrottleRule } from '../db/login-throttle';

/**
 * Guessing passwords is slowed per account (whoever is guessing) and per client address
 * (whichever accounts it tries). The rules apply to any e-mail typed, registered or not,
 * so being blocked says nothing about whether an account exists.
 */
const WINDOW_MS = 15 * 60_000;
const FAILURES_PER_ACCOUNT = 5;
const FAILURES_PER_ADDRESS = 20;
// Sign-ups from one address per window: slows mass account creation and probing for taken e-mails.
const SIGN_UPS_PER_ADDRESS = 10;

const logInRules = (email: string, address: string): ThrottleRule[] => [
  { subject: `account:${email}`, maxFailures: FAILURES_PER_ACCOUNT },
  { subject: `address:${address}`, maxFailures: FAILURES_PER_ADDRESS },
];

export function logInBlockedUntil(db: D1Database, email: string, address: string, now: Date): Promise<Date | null> {
  return blockedUntil(db, logInRules(email, address), now);
}

export function recordFailedLogIn(db: D1Database, email: string, address: string, now: Date): Promise<void> {
  return recordFailure(db, logInRules(email, address).map((rule) => rule.subject), now, WINDOW_MS);
}

/** A right password clears the account's count (not the address's: one success must not unlock guessing elsewhere). */
export function recordSuccessfulLogIn(db: D1Database, email: string): Promise<void> {
  return clearFailures(db, `account:${email}`);
}

export function signUpBlockedUntil(db: D1Database, address: string, now: Date): Promise<Date | null> {
  return blockedUntil(db, [{ subject: `sign-up:${address}`, maxFailures: SIGN_UPS_PER_ADDRESS }], now);
}

export function recordSignUpAttempt(db: D1Database, address: string, now: Date): Promise<void> {
  return recordFailure(db, [`sign-up:${address}`], now, WINDOW_MS);
}

export function minutesUntil(until: Date, now: Date): number {
  return Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 60_000));
}
