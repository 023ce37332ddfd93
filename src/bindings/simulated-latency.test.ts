import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { parseSimulatedRtt, recordingRoundTrips, roundTripsWaited, withSimulatedLatency } from './simulated-latency';

describe('parseSimulatedRtt', () => {
  it('reads "far/near" in ms, and nothing else', () => {
    expect(parseSimulatedRtt('100/5')).toEqual({ farMs: 100, nearMs: 5 });
    expect(parseSimulatedRtt(' 0 / 0 ')).toEqual({ farMs: 0, nearMs: 0 });
    for (const raw of [undefined, '', '100', '100/', '-1/5', 'a/b', '100/5/1']) expect(parseSimulatedRtt(raw)).toBeNull();
  });
});

describe('withSimulatedLatency', () => {
  it('delays each call by its round trip and counts the round trips waited for in turn (overlapping calls once)', async () => {
    const slow = withSimulatedLatency(env, { farMs: 40, nearMs: 10 });
    await recordingRoundTrips(async () => {
      const started = Date.now();
      await slow.DB.prepare('SELECT 1').first();
      expect(Date.now() - started).toBeGreaterThanOrEqual(40);
      // An R2 write beside a D1 read: one far round trip, not two.
      await Promise.all([slow.RESULTS.put('latency-test', 'x'), slow.DB.prepare('SELECT 2').first()]);
      await slow.DB.batch([slow.DB.prepare('SELECT 3'), slow.DB.prepare('SELECT 4')]);
      const gate = slow.USER_GATE.get(slow.USER_GATE.idFromName('user:latency-test'));
      await gate.revoke({ credential: 'key:0', now: Date.now() });
      expect(roundTripsWaited()).toEqual({ far: 3, near: 1 });
    });
    expect(await env.RESULTS.get('latency-test')).not.toBeNull();
  });

  it('passes answers and failures through unchanged', async () => {
    const slow = withSimulatedLatency(env, { farMs: 0, nearMs: 0 });
    expect(await slow.DB.prepare('SELECT ?1 AS v').bind(7).first('v')).toBe(7);
    expect((await slow.DB.prepare('SELECT 1 AS v').all()).results).toEqual([{ v: 1 }]);
    await expect(slow.DB.prepare('SELECT * FROM no_such_table').all()).rejects.toThrow(/no such table/);
    const upload = await slow.RESULTS.createMultipartUpload('latency-multipart');
    await upload.abort();
    expect(roundTripsWaited()).toBeNull(); // counted only inside recordingRoundTrips
  });
});
