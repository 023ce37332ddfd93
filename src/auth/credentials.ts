import { AppError } from '../errors';

/** What a call is authenticated with: an API key, or a signed-in browser's session. */
export type Credential = { kind: 'key'; keyId: number } | { kind: 'session'; idHash: string };

/** The name the user's Durable Object knows a credential by (src/user-gate). */
export function credentialName(credential: Credential): string {
  return credential.kind === 'key' ? `key:${credential.keyId}` : `session:${credential.idHash}`;
}

/**
 * A SQL condition that holds while the credential is live, for statements that must not succeed
 * for a revoked key or an ended session; its parameters, from `?first` on, are liveBindings().
 */
export function liveCondition(credential: Credential, first: number): string {
  return credential.kind === 'key'
    ? `EXISTS (SELECT 1 FROM api_keys WHERE id = ?${first} AND revoked_at IS NULL)`
    : `EXISTS (SELECT 1 FROM sessions WHERE id_hash = ?${first} AND expires_at > ?${first + 1})`;
}

export function liveBindings(credential: Credential, now: Date): (number | string)[] {
  return credential.kind === 'key' ? [credential.keyId] : [credential.idHash, now.toISOString()];
}

/** The 401 of a call whose credential is missing, unknown, revoked or ended: the same words however it is gone. */
export function credentialRefused(kind: Credential['kind']): AppError {
  return kind === 'session'
    ? new AppError('UNAUTHORIZED', 'You are signed out: log in again to convert images.')
    : new AppError('UNAUTHORIZED', 'A valid API key is required: send "Authorization: Bearer <API_KEY>".');
}
