/**
 * Password hashing: PBKDF2-SHA-256 through WebCrypto with a random 16-byte salt per password.
 * Stored as "pbkdf2-sha256$<iterations>$<salt>$<hash>" so the cost can be raised later and old
 * hashes still verify.
 */
import { constantTimeEqual, fromBase64, toBase64 } from './encoding';

// Workers' WebCrypto refuses PBKDF2 above 100,000 iterations, which is also the floor we want.
export const PBKDF2_ITERATIONS = 100_000;
const SALT_BYTES = 16;
const HASH_BITS = 256;
const SCHEME = 'pbkdf2-sha256';

export const MIN_PASSWORD_LENGTH = 10;
// Long enough for any passphrase, short enough that hashing cannot be used to burn CPU.
export const MAX_PASSWORD_LENGTH = 256;

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(password), 'PBKDF2', false, ['deriveBits']);
  const bits = await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations }, key, HASH_BITS);
  return new Uint8Array(bits);
}

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const hash = await derive(password, salt, PBKDF2_ITERATIONS);
  return `${SCHEME}$${PBKDF2_ITERATIONS}$${toBase64(salt)}$${toBase64(hash)}`;
}

function parseStored(stored: string) {
  const [scheme, iterationText, saltText, hashText] = stored.split('$');
  const iterations = Number(iterationText);
  const salt = fromBase64(saltText ?? '');
  const hash = fromBase64(hashText ?? '');
  if (scheme !== SCHEME || !Number.isInteger(iterations) || iterations < 1 || iterations > PBKDF2_ITERATIONS || !salt || !hash) return null;
  return { iterations, salt, hash };
}

// Verified against when the e-mail is unknown, so a miss costs the same time as a wrong password.
const UNKNOWN_ACCOUNT_HASH = `${SCHEME}$${PBKDF2_ITERATIONS}$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`;

/** True when `password` matches `stored`; null `stored` (no such account) takes the same time and is false. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parsed = parseStored(stored ?? UNKNOWN_ACCOUNT_HASH);
  if (!parsed || password.length > MAX_PASSWORD_LENGTH) return false;
  const candidate = await derive(password, parsed.salt, parsed.iterations);
  return constantTimeEqual(candidate, parsed.hash) && stored !== null;
}

// The most used passwords of at least 10 characters (from public breach lists).
const COMMON_PASSWORDS = new Set([
  '1234567890', '0123456789', '0987654321', '1111111111', '0000000000', '1234512345', '1122334455',
  'qwertyuiop', 'password12', 'password123', 'password1234', 'passw0rd123', 'iloveyou12', 'qwerty1234',
  'qwerty12345', 'qwerty123456', '1q2w3e4r5t', '1qaz2wsx3edc', 'abcdefghij', 'abc1234567', 'asdfghjkl1',
  'zxcvbnm123', 'letmein123', 'welcome123', 'football123', 'baseball123', 'monkey1234', 'dragon1234',
  'sunshine12', 'princess12', 'trustno123', 'administrator', 'changeme123', 'qwertyuiop1',
]);

/** Why `password` is too weak for `email`, or null when it will do. */
export function passwordWeakness(password: string, email: string): string | null {
  const advice = `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters that is not a common one and not your e-mail address.`;
  if (password.length > MAX_PASSWORD_LENGTH) return `Choose a password of at most ${MAX_PASSWORD_LENGTH} characters.`;
  if (password.length < MIN_PASSWORD_LENGTH) return advice;
  const lower = password.toLowerCase();
  const localPart = email.split('@')[0];
  if (COMMON_PASSWORDS.has(lower) || new Set(lower).size < 4 || lower.includes(email) || (localPart.length >= 4 && lower === localPart)) return advice;
  return null;
}
