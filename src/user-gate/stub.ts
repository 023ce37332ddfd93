import { credentialName, type Credential } from '../auth/credentials';
import type { UserGate } from './index';

type Bindings = { USER_GATE: DurableObjectNamespace<UserGate> };

/** The user's own Durable Object: one per user, wherever the user calls from. */
export function userGateOf(env: Bindings, userId: number): DurableObjectStub<UserGate> {
  return env.USER_GATE.get(env.USER_GATE.idFromName(`user:${userId}`));
}

/**
 * Tells the user's Durable Object that a key was revoked or a session ended, so that every call
 * with it is refused from its next call on, whichever isolate still has it cached.
 */
export async function revokeAtGate(env: Bindings, userId: number, credential: Credential, now: Date): Promise<void> {
  await userGateOf(env, userId).revoke({ credential: credentialName(credential), now: now.getTime() });
}
