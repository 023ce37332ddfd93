import { env, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createTestUser, usedTodayInD1 } from '../../test/workers/helpers';
import { utcDay } from '../db/usage';
import type { AdmitRequest } from './index';
import { userGateOf } from './stub';

function asks(userId: number, now = new Date()) {
  const caller = { userId, now: now.getTime(), day: utcDay(now), credential: 'key:1' };
  const processing: AdmitRequest = { ...caller, requestsPerSecond: 100, maxConcurrent: 10, reserve: { dailyLimit: 15 } };
  return { caller, processing };
}

describe('UserGate', () => {
  it('starts from the count D1 has for the day, once; then keeps the count itself', async () => {
    const user = await createTestUser({ usedToday: 5 });
    const gate = userGateOf(env, user.id);
    const { caller, processing } = asks(user.id);
    expect(await gate.usage(caller)).toBe(5);
    await env.DB.prepare('UPDATE daily_usage SET used = 9 WHERE user_id = ?1').bind(user.id).run();
    const admitted = await gate.admit(processing);
    expect(admitted).toMatchObject({ admitted: true, used: 6 });
  });

  it('writes each charged conversion to D1 from its alarm, and tries again until D1 takes it', async () => {
    const user = await createTestUser();
    const gate = userGateOf(env, user.id);
    const { caller, processing } = asks(user.id);
    const admitted = await gate.admit(processing);
    if (!admitted.admitted) throw new Error('not admitted');
    await gate.finish({ leaseId: admitted.leaseId!, day: caller.day, charged: true });

    // D1 unreachable for the first attempt: the write fails, and the alarm is set again.
    const real = await runInDurableObject(gate, (instance) => {
      const object = instance as unknown as { db: D1Database };
      const db = object.db;
      object.db = { ...db, batch: () => Promise.reject(new Error('D1 is unreachable')), prepare: db.prepare.bind(db) } as unknown as D1Database;
      return db;
    });
    expect(await runDurableObjectAlarm(gate)).toBe(true);
    expect(await usedTodayInD1(user.id)).toBe(0);
    await runInDurableObject(gate, (instance) => {
      (instance as unknown as { db: D1Database }).db = real;
    });
    expect(await runDurableObjectAlarm(gate)).toBe(true);
    expect(await usedTodayInD1(user.id)).toBe(1);
    expect(await gate.usage(caller)).toBe(1);
  });

  it('charges a call whose lease lapsed, and gives back a reservation only once', async () => {
    const user = await createTestUser();
    const gate = userGateOf(env, user.id);
    const now = new Date();
    const { caller, processing } = asks(user.id, now);
    const first = await gate.admit(processing);
    if (!first.admitted) throw new Error('not admitted');
    // Six minutes later (past any call's lease) another call of the user ends the first one's lease.
    await gate.admit({ ...processing, now: now.getTime() + 6 * 60_000, reserve: undefined, maxConcurrent: null });
    expect(await gate.usage(caller)).toBe(0);
    await gate.finish({ leaseId: first.leaseId!, day: caller.day, charged: true });
    expect(await gate.usage(caller)).toBe(1);
    await gate.finish({ leaseId: first.leaseId!, day: caller.day, charged: false });
    expect(await gate.usage(caller)).toBe(1);
  });

  it('lets an Idempotency-Key claim lapse when its call ended without an answer', async () => {
    const user = await createTestUser();
    const gate = userGateOf(env, user.id);
    const { caller, processing } = asks(user.id);
    const claimFor = async () => {
      const admitted = await gate.admit({ ...processing, reserve: undefined });
      if (!admitted.admitted) throw new Error('not admitted');
      return { leaseId: admitted.leaseId!, claim: await gate.claim({ ...caller, leaseId: admitted.leaseId!, key: 'k', fingerprint: 'f', dailyLimit: 15 }) };
    };
    const first = await claimFor();
    expect(first.claim).toEqual({ kind: 'claimed', used: 1 });
    expect((await claimFor()).claim).toEqual({ kind: 'running' });
    await gate.finish({ leaseId: first.leaseId, day: caller.day, charged: false, idempotency: { key: 'k' } });
    expect((await claimFor()).claim).toEqual({ kind: 'claimed', used: 1 });
  });
});
