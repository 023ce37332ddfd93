import type { Context } from 'hono';
import { fromBase64, toBase64 } from '../auth/encoding';
import { putKeyReveal, takeKeyReveal } from '../db/key-reveals';
import type { AppEnv } from '../env';
import { KEY_REVEAL_LIFETIME_MS, keyRevealCookie } from './cookies';

/*
 * A new API key is shown once, on the page the creating form redirects to (post/redirect/get), so
 * reloading that page cannot post the form again. Between the post and that page the key waits
 * sealed: AES-GCM ciphertext in D1, its AES key in this browser's cookie only. Neither alone
 * opens it, and showing it deletes both.
 */

const IV_BYTES = 12;

async function aesKey(raw: Uint8Array, usage: 'encrypt' | 'decrypt'): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', raw, 'AES-GCM', false, [usage]);
}

/** Seals `apiKey` for the session's next page view. */
export async function sealNewKey(c: Context<AppEnv>, keyId: number, apiKey: string): Promise<void> {
  const session = c.get('session');
  if (!session) throw new Error('a key can only be revealed to a signed-in session');
  const raw = crypto.getRandomValues(new Uint8Array(32));
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const ciphertext = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, await aesKey(raw, 'encrypt'), new TextEncoder().encode(apiKey)));
  const sealed = new Uint8Array(IV_BYTES + ciphertext.length);
  sealed.set(iv);
  sealed.set(ciphertext, IV_BYTES);
  const now = c.get('clock')();
  await putKeyReveal(c.env.DB, { sessionIdHash: session.idHash, keyId, sealed: toBase64(sealed), expiresAt: new Date(now.getTime() + KEY_REVEAL_LIFETIME_MS) });
  keyRevealCookie.write(c, toBase64(raw));
}

/** The key waiting for this page view, if any; taking it deletes it, so the next view shows nothing. */
export async function takeNewKey(c: Context<AppEnv>): Promise<{ name: string; key: string } | null> {
  const session = c.get('session');
  const cookie = keyRevealCookie.read(c);
  if (!session || !cookie) return null;
  keyRevealCookie.clear(c);
  const reveal = await takeKeyReveal(c.env.DB, session.idHash, c.get('clock')());
  const raw = fromBase64(cookie);
  const sealed = reveal ? fromBase64(reveal.sealed) : null;
  if (!reveal || !raw || raw.length !== 32 || !sealed || sealed.length <= IV_BYTES) return null;
  try {
    const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: sealed.subarray(0, IV_BYTES) }, await aesKey(raw, 'decrypt'), sealed.subarray(IV_BYTES));
    return { name: reveal.name, key: new TextDecoder().decode(plain) };
  } catch {
    return null; // a cookie from another reveal: the key stays unshown (it can be revoked and made again)
  }
}
