import type { OpenAPIHono } from '@hono/zod-openapi';
import { csrf } from 'hono/csrf';
import { hashApiKey } from '../auth/api-keys';
import { normalizeEmail } from '../auth/email';
import { hashPassword, passwordWeakness, verifyPassword } from '../auth/passwords';
import { createUserWithPassword, findLoginCandidate, setFirstPassword } from '../db/passwords';
import { findUserByKeyHash } from '../db/users';
import type { AppEnv } from '../env';
import { csrfToken } from '../middleware/csrf-token';
import { webForm } from '../middleware/web-form';
import { signInFrameOf, textField } from './frame';
import { LogInPage, SignUpPage } from './pages/sign-in';
import { clientAddress, endSession, safeNextPath, startSession } from './sessions';
import { logInSucceeded, retryAfterText, takeLogInAttempt, takeSignUpAttempt } from './throttle';

// One message whether or not the account has a password yet, so it does not reveal which
// operator-made accounts are still unclaimed.
const TAKEN =
  'This e-mail already has an account. Log in instead, or, if the operator made the account for you, enter one of its API keys under “Account created by the operator?”.';
// The same words for an unknown e-mail, an account without a password and a wrong password.
const WRONG_CREDENTIALS = 'Wrong e-mail or password.';

export function registerAuthRoutes(app: OpenAPIHono<AppEnv>) {
  app.get('/signup', (c) => (c.get('session') ? c.redirect('/account', 303) : c.html(<SignUpPage frame={signInFrameOf(c)} />)));

  app.post('/signup', csrf(), webForm, csrfToken, async (c) => {
    const typedEmail = textField(c, 'email');
    const password = textField(c, 'password');
    const apiKey = textField(c, 'api_key').trim();
    const db = c.env.DB;
    const now = c.get('clock')();
    const address = clientAddress(c);
    const refuse = (status: 409 | 422 | 429, error: string, apiKeyOpen = false) =>
      c.html(<SignUpPage frame={signInFrameOf(c)} email={typedEmail} error={error} apiKeyOpen={apiKeyOpen} />, status);

    const email = normalizeEmail(typedEmail);
    if (!email) return refuse(422, 'Enter a valid e-mail address, such as name@example.com.');
    const weakness = passwordWeakness(password, email);
    if (weakness) return refuse(422, weakness);
    const blockedUntil = await takeSignUpAttempt(db, address, now);
    if (blockedUntil) return refuse(429, `Too many sign-ups from your network. Try again ${retryAfterText(blockedUntil, now)}.`);

    const existing = await findLoginCandidate(db, email);
    let userId: number;
    if (!existing) {
      const user = await createUserWithPassword(db, email, await hashPassword(password), now);
      if (!user) return refuse(409, TAKEN);
      userId = user.id;
    } else if (existing.password_hash !== null) {
      return refuse(409, TAKEN);
    } else {
      // Made by the operator, no password yet: only someone holding one of its live keys may set one.
      const keyOwner = apiKey ? await findUserByKeyHash(db, await hashApiKey(apiKey)) : null;
      if (keyOwner?.id !== existing.id) return refuse(409, TAKEN, apiKey !== '');
      if (!(await setFirstPassword(db, existing.id, await hashPassword(password), now))) return refuse(409, TAKEN);
      userId = existing.id;
    }
    await startSession(c, userId);
    return c.redirect('/account', 303);
  });

  app.get('/login', (c) => {
    const next = c.req.query('next');
    if (c.get('session')) return c.redirect(safeNextPath(next), 303);
    return c.html(<LogInPage frame={signInFrameOf(c)} next={next} />);
  });

  app.post('/login', csrf(), webForm, csrfToken, async (c) => {
    const typedEmail = textField(c, 'email');
    const password = textField(c, 'password');
    const next = c.req.query('next');
    const db = c.env.DB;
    const now = c.get('clock')();
    const address = clientAddress(c);
    const email = normalizeEmail(typedEmail);
    const throttleKey = email ?? typedEmail.trim().toLowerCase().slice(0, 254);
    const refuse = (status: 401 | 429, error: string) => c.html(<LogInPage frame={signInFrameOf(c)} email={typedEmail} next={next} error={error} />, status);

    // Counted before the password is checked, so parallel guesses cannot slip past the limit.
    const blockedUntil = await takeLogInAttempt(db, throttleKey, address, now);
    if (blockedUntil) return refuse(429, `Too many failed log-ins. Try again ${retryAfterText(blockedUntil, now)}.`);
    const candidate = email ? await findLoginCandidate(db, email) : null;
    // Always hashes, also for unknown e-mails, so the answer time does not tell them apart.
    const matches = await verifyPassword(password, candidate?.password_hash ?? null);
    if (!candidate || !matches) return refuse(401, WRONG_CREDENTIALS);
    await logInSucceeded(db, throttleKey, address);
    await startSession(c, candidate.id);
    return c.redirect(safeNextPath(next), 303);
  });

  app.post('/logout', csrf(), webForm, csrfToken, async (c) => {
    await endSession(c);
    return c.redirect('/', 303);
  });
}
