import { describe, expect, it } from 'vitest';
import { createTestUser, expectFailure } from '../../../test/workers/helpers';
import { appWith } from '../../../test/workers/middleware-app';
import { PLANS } from '../../plans';

const request = appWith([], (c) => c.json(c.get('account')));

describe('apiKeyAuth', () => {
  it('puts the key owner and the effective plan on the context', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const response = await request(user.key);
    const account = await response.json();
    expect(account).toEqual({ userId: user.id, email: user.email, plan: 'pro', subscriptionEndsAt: null, limits: PLANS.pro, credential: { kind: 'key', keyId: expect.any(Number) } });
  });

  it('gives an ended Pro subscription the Free limits', async () => {
    const user = await createTestUser({ plan: 'pro', subscriptionEndsAt: '2020-01-01T00:00:00.000Z' });
    expect(await (await request(user.key)).json()).toMatchObject({ plan: 'free', limits: PLANS.free });
  });

  it('refuses anything else before the handler runs', async () => {
    const response = await request('imgk_' + 'x'.repeat(32));
    await expectFailure(response, 401, 'UNAUTHORIZED');
  });
});
