/**
 * API keys: `imgk_` + 32 base62 characters (~190 random bits). The prefix makes a leaked
 * key recognisable (and greppable by secret scanners); only its SHA-256 hash is stored.
 * WebCrypto only, so the Worker and the Node operator command share this module.
 */
import { sha256Hex } from '../hex.ts';
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

export function hashApiKey(key: string): Promise<string> {
  return sha256Hex(key);
}

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
export const MAX_KEY_NAME_LENGTH = 64;

/** A key's label as stored (trimmed, 1-64 characters, no control characters), or null. */
export function normalizeKeyName(input: string): string | null {
  const name = input.trim();
  if (name.length < 1 || name.length > MAX_KEY_NAME_LENGTH || CONTROL.test(name)) return null;
  return name;
}
