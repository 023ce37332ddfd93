import { clearAttempts, giveBackAttempt, takeAttempt, type ThrottleRule } from '../db/login-throttle';

/**
 * Guessing passwords is limited per account, per client address, and per account from one
 * address. The rules apply to any e-mail typed, registered or not, so being refused says
 * nothing about whether an account exists. The per-account ceiling is higher than the
 * per-pair one so that one stranger cannot lock someone out: it takes many addresses.
 */
const MINUTE = 60_000;
const WINDOW_MS = 15 * MINUTE;
const LOG_IN_LIMITS = { accountFromAddress: 5, account: 30, address: 20 };
// Sign-ups from one address: slows mass account creation and probing for taken e-mails.
const SIGN_UP_LIMITS = { perWindow: 10, perDay: 30 };

/**
 * The throttling key of a client address: IPv6 by its /64 (one customer's network, in which a
 * client can pick any address), IPv4 as it is.
 */
export function addressKey(address: string): string {
  if (!address.includes(':')) return address;
  const [head, tail = ''] = address.toLowerCase().split('::');
  const groups = head.split(':').filter(Boolean);
  const tailGroups = tail.split(':').filter(Boolean);
  const full = [...groups, ...Array(Math.max(0, 8 - groups.length - tailGroups.length)).fill('0'), ...tailGroups];
  return `${full.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

const logInRules = (email: string, address: string): ThrottleRule[] => [
  { subject: `account:${email}|address:${addressKey(address)}`, maxAttempts: LOG_IN_LIMITS.accountFromAddress, windowMs: WINDOW_MS },
  { subject: `account:${email}`, maxAttempts: LOG_IN_LIMITS.account, windowMs: WINDOW_MS },
  { subject: `address:${addressKey(address)}`, maxAttempts: LOG_IN_LIMITS.address, windowMs: WINDOW_MS },
];

/** Counts a log-in attempt; returns when the caller may try again if it is over a limit. */
export function takeLogInAttempt(db: D1Database, email: string, address: string, now: Date): Promise<Date | null> {
  return takeAttempt(db, logInRules(email, address), now);
}

/** A right password clears the account's counts and gives the address its attempt back. */
export async function logInSucceeded(db: D1Database, email: string, address: string): Promise<void> {
  const [pair, account, fromAddress] = logInRules(email, address);
  await Promise.all([clearAttempts(db, pair.subject), clearAttempts(db, account.subject), giveBackAttempt(db, fromAddress.subject)]);
}

export function takeSignUpAttempt(db: D1Database, address: string, now: Date): Promise<Date | null> {
  const key = addressKey(address);
  return takeAttempt(
    db,
    [
      { subject: `sign-up:${key}`, maxAttempts: SIGN_UP_LIMITS.perWindow, windowMs: WINDOW_MS },
      { subject: `sign-up-day:${key}`, maxAttempts: SIGN_UP_LIMITS.perDay, windowMs: 24 * 60 * MINUTE },
    ],
    now,
  );
}

/** "in 12 minutes", "in 3 hours": when a refused client may try again. */
export function retryAfterText(until: Date, now: Date): string {
  const minutes = Math.max(1, Math.ceil((until.getTime() - now.getTime()) / MINUTE));
  if (minutes <= 90) return `in ${minutes} minute${minutes === 1 ? '' : 's'}`;
  return `in ${Math.ceil(minutes / 60)} hours`;
}
