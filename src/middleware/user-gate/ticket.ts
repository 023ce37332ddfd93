import type { Context } from 'hono';
import { credentialName } from '../../auth/credentials';
import { utcDay } from '../../db/usage';
import type { AppEnv } from '../../env';
import type { CallerFacts, Claim, UserGate } from '../../user-gate';
import { userGateOf } from '../../user-gate/stub';

/** Who is asking, as the user's Durable Object is told on every call. */
export function callerFacts(c: Context<AppEnv>): CallerFacts {
  const now = c.get('clock')();
  const { userId, credential } = c.get('account');
  return { userId, now: now.getTime(), day: utcDay(now), credential: credentialName(credential) };
}

/**
 * A processing call's place at the user's Durable Object: the concurrency slot it holds and the
 * conversion it has reserved (at admission, or by claiming an Idempotency-Key). `finish` is called
 * once, however the call ends (a disconnect may call it first).
 */
export class GateTicket {
  /** The count of today's conversions as the object last told it, this call's reservation included. */
  used: number;
  reserved: boolean;
  claimedKey: string | null = null;
  private finished: Promise<void> | null = null;

  constructor(
    private readonly gate: DurableObjectStub<UserGate>,
    private readonly caller: CallerFacts,
    readonly leaseId: string,
    admitted: { used: number; reserved: boolean },
    private readonly dailyLimit: number | null,
  ) {
    this.used = admitted.used;
    this.reserved = admitted.reserved;
  }

  static of(c: Context<AppEnv>, caller: CallerFacts, leaseId: string, admitted: { used: number; reserved: boolean }): GateTicket {
    return new GateTicket(userGateOf(c.env, caller.userId), caller, leaseId, admitted, c.get('account').limits.dailyConversions);
  }

  /** Claims `key` for this call with one of the day's conversions, or learns what the key already holds. */
  async claim(key: string, fingerprint: string): Promise<Claim> {
    const claim = await this.gate.claim({ ...this.caller, leaseId: this.leaseId, key, fingerprint, dailyLimit: this.dailyLimit });
    if (claim.kind === 'claimed') {
      this.reserved = true;
      this.claimedKey = key;
      this.used = claim.used;
    } else {
      // The object has ended the lease already: nothing is left to finish.
      this.finished = Promise.resolve();
      if (claim.kind === 'quota') this.used = claim.used;
    }
    return claim;
  }

  /** Gives the slot back and spends the reserved conversion if `charged`; `answer` is what a repeat of the key replays. */
  finish(charged: boolean, answer?: { response: string; expiresAt: number }): Promise<void> {
    this.finished ??= this.gate
      .finish({
        leaseId: this.leaseId,
        day: this.caller.day,
        charged: charged && this.reserved,
        idempotency: this.claimedKey === null ? undefined : { key: this.claimedKey, ...(charged ? answer : {}) },
      })
      .catch((error: unknown) => console.error(JSON.stringify({ user_gate: this.caller.userId, error: `finishing a call failed: ${String(error)}` })));
    return this.finished;
  }
}

/** Today's conversions as the user's Durable Object counts them (pages that show the quota; no request rate spent). */
export function todaysConversions(c: Context<AppEnv>): Promise<number> {
  const caller = callerFacts(c);
  return userGateOf(c.env, caller.userId).usage(caller);
}
