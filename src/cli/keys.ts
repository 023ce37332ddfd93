/// <reference types="node" />
/**
 * The operator command's view of API keys. The format itself is defined once, in
 * src/auth/api-keys.ts (WebCrypto, shared with the Worker); Node only adds a synchronous hash
 * so SQL can be built in one go.
 */
import { createHash } from 'node:crypto';
import { API_KEY_LENGTH, API_KEY_PATTERN, DISPLAY_PREFIX_LENGTH, displayPrefix, generateApiKey } from '../auth/api-keys.ts';

export { API_KEY_LENGTH as KEY_LENGTH, API_KEY_PATTERN as KEY_PATTERN, DISPLAY_PREFIX_LENGTH as STORED_PREFIX_LENGTH, generateApiKey as generateKey };

export function isWellFormedKey(key: string): boolean {
  return API_KEY_PATTERN.test(key);
}

/** Same value as the Worker's hashApiKey: lowercase hex SHA-256 of the whole key. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** What goes into `api_keys` for a key. */
export function storedKey(key: string): { prefix: string; keyHash: string } {
  if (!isWellFormedKey(key)) throw new Error('not a well-formed API key');
  return { prefix: displayPrefix(key), keyHash: hashKey(key) };
}
