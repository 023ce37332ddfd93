import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { csrf } from 'hono/csrf';
import { accountSummary } from '../account';
import { forgetKey } from '../auth/cached-lookups';
import { displayPrefix, generateApiKey, hashApiKey, normalizeKeyName } from '../auth/api-keys';
import { listLiveResults } from '../db/results';
import { insertApiKeyUnderCap, listApiKeys, revokeApiKey } from '../db/users';
import type { AppEnv } from '../env';
import { csrfToken } from '../middleware/csrf-token';
import { webForm } from '../middleware/web-form';
import { requireSessionPage } from '../middleware/session';
import { todaysConversions } from '../middleware/user-gate/ticket';
import { revokeAtGate } from '../user-gate/stub';
import { downloadPath } from '../storage/results';
import { frameOf, textField } from './frame';
import { sealNewKey, takeNewKey } from './key-reveal';
import { AccountPage, type AccountView } from './pages/account';
import { ConverterPage } from './pages/converter';

// Enough for every laptop, server and CI job; a runaway script cannot fill the table.
const MAX_LIVE_KEYS = 25;
const RECENT_RESULTS = 20;

const NOTICES: Record<string, AccountView['notice']> = {
  revoked: { kind: 'success', text: 'The key was revoked. Calls with it are refused from now on.' },
  'not-found': { kind: 'error', text: 'That key does not exist or was already revoked.' },
};

async function renderAccount(c: Context<AppEnv>, extra: Pick<AccountView, 'newKey' | 'notice'>, status: 200 | 422 = 200) {
  const account = c.get('account');
  const now = c.get('clock')();
  const origin = c.get('settings').siteUrl ?? new URL(c.req.url).origin;
  const [used, keys, results] = await Promise.all([todaysConversions(c), listApiKeys(c.env.DB, account.userId), listLiveResults(c.env.DB, account.userId, now, RECENT_RESULTS)]);
  const summary = accountSummary(account, used);
  const withLinks = results.map((row) => ({ ...row, downloadUrl: origin + downloadPath(row) }));
  return c.html(<AccountPage frame={frameOf(c)} summary={summary} keys={keys} results={withLinks} {...extra} />, status);
}

export function registerAccountRoutes(app: OpenAPIHono<AppEnv>) {
  app.get('/account', requireSessionPage, async (c) => renderAccount(c, { notice: NOTICES[c.req.query('notice') ?? ''], newKey: (await takeNewKey(c)) ?? undefined }));

  app.post('/account/keys', csrf(), requireSessionPage, webForm, csrfToken, async (c) => {
    const { userId } = c.get('account');
    const name = normalizeKeyName(textField(c, 'name'));
    if (!name) return renderAccount(c, { notice: { kind: 'error', text: 'Give the key a name of 1 to 64 characters.' } }, 422);
    const key = generateApiKey();
    const created = await insertApiKeyUnderCap(c.env.DB, { userId, name, prefix: displayPrefix(key), keyHash: await hashApiKey(key) }, MAX_LIVE_KEYS);
    if (created === null) {
      return renderAccount(c, { notice: { kind: 'error', text: `You have ${MAX_LIVE_KEYS} keys: revoke one before creating another.` } }, 422);
    }
    await sealNewKey(c, created, key);
    return c.redirect('/account#new-key', 303);
  });

  app.post('/account/keys/:id/revoke', csrf(), requireSessionPage, webForm, csrfToken, async (c) => {
    const id = Number(c.req.param('id'));
    const { userId } = c.get('account');
    const now = c.get('clock')();
    const revoked = Number.isSafeInteger(id) && (await revokeApiKey(c.env.DB, userId, id, now));
    if (revoked) {
      // Refused from the next call on: here at once, by the user's Durable Object for every call, by other isolates' caches within a minute.
      forgetKey(id);
      await revokeAtGate(c.env, userId, { kind: 'key', keyId: id }, now);
    }
    return c.redirect(`/account?notice=${revoked ? 'revoked' : 'not-found'}`, 303);
  });

  app.get('/convert', requireSessionPage, async (c) => c.html(<ConverterPage frame={frameOf(c)} summary={accountSummary(c.get('account'), await todaysConversions(c))} />));
}
