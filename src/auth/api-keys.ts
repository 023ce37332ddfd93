/**
 * API keys: `imgk_` + 32 base62 characters (~190 random bits). The prefix makes a leaked
 * key recognisable (and greppable by secret scanners); only its SHA-256 hash is stored.
 * WebCrypto only, so the Worker and the Node operator command share this module.
 */
import { toHex } from '../hex.ts';
export const API_KEY_PREFIX = 'imgk_';
const BODY_LENGTH = 32;
export const API_KEY_LENGTH = API_KEY_PREFIX.length + BODY_LENGTH;
export const DISPLAY_PREFIX_LENGTH = 12;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const API_KEY_PATTERN = /^imgk_[0-9A-Za-z]{32}$/;

export function generateApiKey(): string {
  let body = '';
  while (body.length < BODY_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(BODY_LENGTH))) {
      // Rejection sampling keeps every character equally likely (248 = 4 * 62).
      if (byte < 248 && body.length < BODY_LENGTH) body += BASE62[byte % 62];
    }
  }
  return API_KEY_PREFIX + body;
}

/** What people see and what `admin revoke-key` takes: the first 12 characters. */
export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_LENGTH);
}

export async function hashApiKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key));
  return toHex(new Uint8Array(digest));
}
