import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { PBKDF2_ITERATIONS } from '../../src/auth/passwords';
import { api, createTestUser, json } from './helpers';
import { alertText, uniqueEmail, WebClient } from './web-client';

const PASSWORD = 'a long enough passphrase';

async function storedHash(email: string): Promise<string | null> {
  const row = await env.DB.prepare('SELECT p.hash FROM passwords p JOIN users u ON u.id = p.user_id WHERE u.email = ?1').bind(email).first<{ hash: string }>();
  return row?.hash ?? null;
}

describe('sign up', () => {
  it('creates a Free account, signs the browser in and lands on the account page', async () => {
    const browser = new WebClient();
    const email = uniqueEmail();
    const response = await browser.signUp(email.toUpperCase());
    expect(response.status).toBe(303);
    expect(response.headers.get('Location')).toBe('/account');
    const page = await (await browser.get('/account')).text();
    expect(page).toContain(email);
    expect(page).toMatch(/<dt>Plan<\/dt><dd>Free<\/dd>/);
  });

  it('stores PBKDF2-SHA-256 with 100,000 iterations and a salt of its own per user', async () => {
    const [first, second] = [uniqueEmail(), uniqueEmail()];
    await new WebClient().signUp(first, PASSWORD);
    await new WebClient().signUp(second, PASSWORD);
    const [a, b] = [await storedHash(first), await storedHash(second)];
    expect(a).toMatch(new RegExp(`^pbkdf2-sha256\\$${PBKDF2_ITERATIONS}\\$[A-Za-z0-9+/=]{24}\\$[A-Za-z0-9+/=]{44}$`));
    expect(PBKDF2_ITERATIONS).toBeGreaterThanOrEqual(100_000);
    expect(a!.split('$')[2]).not.toBe(b!.split('$')[2]);
    expect(a).not.toContain(PASSWORD);
  });

  it('sets an HttpOnly, SameSite=Lax session cookie: __Host- and Secure on a real host, plain on localhost', async () => {
    const remote = await new WebClient('https://images.example.com').signUp(uniqueEmail());
    const remoteCookie = remote.headers.getSetCookie().find((line) => line.includes('session='))!;
    expect(remoteCookie).toMatch(/^__Host-session=[A-Za-z0-9_-]{43};/);
    expect(remoteCookie).toMatch(/; Secure/);
    expect(remoteCookie).toMatch(/; HttpOnly/);
    expect(remoteCookie).toMatch(/; SameSite=Lax/);
    expect(remoteCookie).toMatch(/; Path=\//);

    const local = await new WebClient('http://localhost:8787').signUp(uniqueEmail());
    const localCookie = local.headers.getSetCookie().find((line) => line.includes('session='))!;
    expect(localCookie).toMatch(/^session=/);
    expect(localCookie).not.toMatch(/Secure/);
    expect(localCookie).toMatch(/; HttpOnly/);
  });

  it('says clearly when the e-mail is taken, the password weak or the address malformed', async () => {
    const email = uniqueEmail();
    await new WebClient().signUp(email);
    const taken = await new WebClient().signUp(email.toUpperCase(), 'another long passphrase');
    expect(taken.status).toBe(409);
    expect(alertText(await taken.text())).toMatch(/^This e-mail already has an account\. Log in instead/);

    for (const weak of ['short', '1234567890', 'aaaaaaaaaaaaaa', 'own-address']) {
      const newEmail = uniqueEmail();
      const response = await new WebClient().signUp(newEmail, weak === 'own-address' ? newEmail : weak);
      expect(response.status).toBe(422);
      expect(alertText(await response.text())).toMatch(/^Choose a password of at least 10 characters/);
    }
    const malformed = await new WebClient().signUp('not-an-address', PASSWORD);
    expect(malformed.status).toBe(422);
    expect(alertText(await malformed.text())).toMatch(/valid e-mail address/);
  });

  it('keeps what was typed (not the password) when the form comes back', async () => {
    const email = uniqueEmail();
    const page = await (await new WebClient().signUp(email, 'short')).text();
    expect(page).toContain(`value="${email}"`);
    expect(page).not.toContain('value="short"');
  });
});

describe('accounts made by the operator', () => {
  it('can set a password only with one of their own live API keys, and only once', async () => {
    const owner = await createTestUser();
    const stranger = await createTestUser();

    const withoutKey = await new WebClient().signUp(owner.email);
    expect(withoutKey.status).toBe(409);
    // The same words as for an account with a password: unclaimed accounts are not revealed.
    expect(alertText(await withoutKey.text())).toMatch(/already has an account\. Log in instead, or, if the operator made the account for you, enter one of its API keys/);

    const withOthersKey = await new WebClient().signUp(owner.email, PASSWORD, { api_key: stranger.key });
    expect(withOthersKey.status).toBe(409);
    expect(await storedHash(owner.email)).toBeNull();

    const claimed = await new WebClient().signUp(owner.email, PASSWORD, { api_key: owner.key });
    expect(claimed.status).toBe(303);
    expect(await storedHash(owner.email)).not.toBeNull();

    // The account keeps its plan and keys; a second claim cannot replace the password.
    const again = await new WebClient().signUp(owner.email, 'the attackers passphrase', { api_key: owner.key });
    expect(again.status).toBe(409);
    expect((await new WebClient().logIn(owner.email, 'the attackers passphrase')).status).toBe(401);
    expect((await new WebClient().logIn(owner.email, PASSWORD)).status).toBe(303);
    expect((await api('/api/v1/me', { key: owner.key })).status).toBe(200);
  });

  it('refuses a revoked key as proof', async () => {
    const owner = await createTestUser();
    await env.DB.prepare("UPDATE api_keys SET revoked_at = '2026-01-01T00:00:00.000Z' WHERE user_id = ?1").bind(owner.id).run();
    const response = await new WebClient().signUp(owner.email, PASSWORD, { api_key: owner.key });
    expect(response.status).toBe(409);
    expect(await storedHash(owner.email)).toBeNull();
  });
});

describe('log in and log out', () => {
  it('gives the same answer for a wrong password, an unknown e-mail and an account without a password', async () => {
    const email = uniqueEmail();
    await new WebClient().signUp(email, PASSWORD);
    const operatorMade = await createTestUser();
    const answers = [];
    for (const [who, password] of [
      [email, 'wrong passphrase!'],
      [uniqueEmail('nobody'), PASSWORD],
      [operatorMade.email, PASSWORD],
    ]) {
      const response = await new WebClient().logIn(who, password);
      answers.push([response.status, alertText(await response.text())]);
    }
    expect(answers).toEqual([
      [401, 'Wrong e-mail or password.'],
      [401, 'Wrong e-mail or password.'],
      [401, 'Wrong e-mail or password.'],
    ]);
  });

  it('starts a new session on log-in (a planted session id is never kept)', async () => {
    const email = uniqueEmail();
    const first = new WebClient();
    await first.signUp(email, PASSWORD);
    const before = first.session;
    // Signed in already, the log-in form's token is the session's (the page shows it in the log-out form).
    const response = await first.postForm('/login?next=%2Fconvert', { email, password: PASSWORD }, { tokenFrom: '/account' });
    expect(response.status).toBe(303);
    expect(response.headers.get('Location')).toBe('/convert');
    expect(first.session).not.toBe(before);
    // The replaced session is gone, not just forgotten by this browser.
    const old = new WebClient();
    old.session = before!;
    expect((await old.get('/account')).status).toBe(303);
  });

  it('only follows `next` to a path on this site', async () => {
    const email = uniqueEmail();
    await new WebClient().signUp(email, PASSWORD);
    for (const next of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
      const response = await new WebClient().logIn(email, PASSWORD, `/login?next=${encodeURIComponent(next)}`);
      expect(response.headers.get('Location')).toBe('/account');
    }
  });

  it('log-out ends the session on the server: the old cookie no longer opens the account', async () => {
    const browser = new WebClient();
    const email = uniqueEmail();
    await browser.signUp(email, PASSWORD);
    const stolen = browser.session!;
    const out = await browser.postForm('/logout', {});
    expect(out.status).toBe(303);
    expect(out.headers.get('Location')).toBe('/');
    expect(browser.session).toBeUndefined();

    const replay = new WebClient();
    replay.session = stolen;
    const response = await replay.get('/account');
    expect(response.status).toBe(303);
    expect(response.headers.get('Location')).toBe('/login?next=%2Faccount');
    const sessions = await env.DB.prepare('SELECT COUNT(*) AS n FROM sessions WHERE user_id = (SELECT id FROM users WHERE email = ?1)').bind(email).first<{ n: number }>();
    expect(sessions?.n).toBe(0);
  });

  it('a session past its end date is refused even before the cleanup job runs', async () => {
    const browser = new WebClient();
    const email = uniqueEmail();
    await browser.signUp(email, PASSWORD);
    await env.DB.prepare("UPDATE sessions SET expires_at = '2000-01-01T00:00:00.000Z' WHERE user_id = (SELECT id FROM users WHERE email = ?1)").bind(email).run();
    expect((await browser.get('/account')).status).toBe(303);
  });
});

describe('log-in throttling', () => {
  const wrong = 'wrong passphrase!';

  it('stops an address after 5 tries at one account, even with the right password; other addresses still get in', async () => {
    const email = uniqueEmail();
    await new WebClient().signUp(email, PASSWORD);
    const guesser = new WebClient();
    for (let attempt = 0; attempt < 5; attempt++) expect((await guesser.logIn(email, wrong)).status).toBe(401);
    const locked = await guesser.logIn(email, PASSWORD);
    expect(locked.status).toBe(429);
    expect(alertText(await locked.text())).toMatch(/^Too many failed log-ins\. Try again in 1[45] minutes\.$/);
    expect((await new WebClient().logIn(email, PASSWORD)).status).toBe(303);
  });

  it('counts before checking, so parallel guesses cannot slip past the limit', async () => {
    const email = uniqueEmail();
    await new WebClient().signUp(email, PASSWORD);
    const guesser = new WebClient();
    const token = await guesser.csrfToken('/login');
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => guesser.postForm('/login', { email, password: wrong }, { token }).then((response) => response.status)),
    );
    expect(answers.filter((status) => status === 401)).toHaveLength(5);
    expect(answers.filter((status) => status === 429)).toHaveLength(15);
  });

  it('locks an account after 30 failures from any number of addresses, registered or not', async () => {
    for (const email of [uniqueEmail(), uniqueEmail('ghost')]) {
      if (!email.startsWith('ghost')) await new WebClient().signUp(email, PASSWORD);
      for (let attempt = 0; attempt < 30; attempt++) expect((await new WebClient().logIn(email, wrong)).status).toBe(401);
      // Same answer for an e-mail nobody registered: being locked says nothing about existence.
      expect((await new WebClient().logIn(email, email.startsWith('ghost') ? wrong : PASSWORD)).status).toBe(429);
    }
  });

  it('limits one address to 20 failures across accounts (an IPv6 client by its /64)', async () => {
    const attacker = new WebClient('http://api.test', '2001:db8:1:2::1');
    for (let attempt = 0; attempt < 20; attempt++) {
      const sameNetwork = new WebClient('http://api.test', `2001:db8:1:2:${attempt.toString(16)}::9`);
      expect((await sameNetwork.logIn(uniqueEmail('probe'), wrong)).status).toBe(401);
    }
    const email = uniqueEmail();
    await new WebClient().signUp(email, PASSWORD);
    expect((await attacker.logIn(email, PASSWORD)).status).toBe(429);
    expect((await new WebClient('http://api.test', '2001:db8:1:3::1').logIn(email, PASSWORD)).status).toBe(303);
  });

  it('a successful log-in clears the count', async () => {
    const email = uniqueEmail();
    await new WebClient().signUp(email, PASSWORD);
    const browser = new WebClient();
    for (let attempt = 0; attempt < 4; attempt++) await browser.logIn(email, wrong);
    expect((await browser.logIn(email, PASSWORD)).status).toBe(303);
    browser.cookies.clear();
    for (let attempt = 0; attempt < 4; attempt++) await browser.logIn(email, wrong);
    expect((await browser.logIn(email, PASSWORD)).status).toBe(303);
  });

  it('limits sign-ups from one address', async () => {
    const browser = new WebClient();
    for (let attempt = 0; attempt < 10; attempt++) {
      expect((await browser.signUp(uniqueEmail())).status).toBe(303);
      browser.cookies.clear();
    }
    const refused = await browser.signUp(uniqueEmail());
    expect(refused.status).toBe(429);
    expect(alertText(await refused.text())).toMatch(/^Too many sign-ups from your network/);
  });
});

describe('hostile form input', () => {
  it('answers a bad or oversized form with a page, never a 500, and before reading a big body', async () => {
    const browser = new WebClient();
    const token = await browser.csrfToken('/login');
    const multipart = new FormData();
    multipart.append('email', 'a@b.cd');
    const answers = [
      await browser.request('/login', { method: 'POST', body: multipart, headers: { Origin: browser.origin, 'X-CSRF-Token': token } }),
      await browser.request('/signup', { method: 'POST', body: 'x', headers: { Origin: browser.origin, 'Content-Type': 'multipart/form-data', 'X-CSRF-Token': token } }),
      await browser.request('/login', {
        method: 'POST',
        body: `csrf_token=${token}&email=${'a'.repeat(64 * 1024)}`,
        headers: { Origin: browser.origin, 'Content-Type': 'application/x-www-form-urlencoded' },
      }),
    ];
    for (const response of answers) {
      expect(response.status).toBe(422);
      expect(response.headers.get('Content-Type')).toMatch(/text\/html/);
      expect(alertText(await response.text())).toBe('The form could not be read. Reload the page and send it again.');
    }
  });

  it('a control character in `next` is not followed (it could not be a Location header)', async () => {
    const email = uniqueEmail();
    await new WebClient().signUp(email, PASSWORD);
    const response = await new WebClient().logIn(email, PASSWORD, '/login?next=%2F%00x');
    expect(response.status).toBe(303);
    expect(response.headers.get('Location')).toBe('/account');
  });
});

describe('me and the account page agree', () => {
  it('shows the numbers GET /api/v1/me returns', async () => {
    const owner = await createTestUser({ usedToday: 6 });
    const browser = new WebClient();
    await browser.signUp(owner.email, PASSWORD, { api_key: owner.key });
    const me = (await json(await api('/api/v1/me', { key: owner.key }))).data;
    const page = await (await browser.get('/account')).text();
    expect(page).toContain(`<dt>Used today</dt><dd>${me.quota.daily_used} of ${me.quota.daily_max} conversions`);
    expect(page).toContain(`<dt>Remaining today</dt><dd>${me.quota.daily_remaining} conversions</dd>`);
    expect(page).toContain(`<dt>Rate limit</dt><dd>${me.rate_limit.requests_per_second} requests per second</dd>`);
    expect(page).toContain(`<dt>Max file size</dt><dd>${me.quota.max_file_size_mb} MB</dd>`);
  });
});
