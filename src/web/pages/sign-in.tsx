import type { Child } from 'hono/jsx';
import { MIN_PASSWORD_LENGTH } from '../../auth/passwords';
import { CsrfField, Field, hintId, Layout, Notice, type PageFrame } from '../layout';

interface FormState {
  frame: PageFrame;
  email?: string;
  error?: string;
}

function CredentialFields({ email, newPassword }: { email?: string; newPassword: boolean }) {
  return (
    <>
      <Field label="Email" id="email">
        <input id="email" type="email" name="email" value={email ?? ''} autocomplete="email" required maxlength={254} />
      </Field>
      <Field label="Password" id="password" hint={newPassword ? `At least ${MIN_PASSWORD_LENGTH} characters.` : undefined}>
        <input
          id="password"
          aria-describedby={newPassword ? hintId('password') : undefined}
          type="password"
          name="password"
          autocomplete={newPassword ? 'new-password' : 'current-password'}
          required
          minlength={newPassword ? MIN_PASSWORD_LENGTH : undefined}
          maxlength={256}
        />
      </Field>
    </>
  );
}

function CardPage({ title, frame, error, children }: { title: string; frame: PageFrame; error?: string; children: Child }) {
  return (
    <Layout title={title} frame={frame}>
      <section class="card narrow">
        <h1>{title}</h1>
        {error ? <Notice kind="error">{error}</Notice> : null}
        {children}
      </section>
    </Layout>
  );
}

export function SignUpPage({ frame, email, error, apiKeyOpen }: FormState & { apiKeyOpen?: boolean }) {
  return (
    <CardPage title="Sign up" frame={frame} error={error}>
      <form method="post" action="/signup" class="stack">
        <CsrfField token={frame.csrfToken} />
        <CredentialFields email={email} newPassword />
        <details open={apiKeyOpen}>
          <summary>Account created by the operator?</summary>
          <p class="hint">
            If the operator made your account and gave you an API key, enter it here to set your password. A key proves the account is yours.
          </p>
          <Field label="API key" id="api-key">
            <input id="api-key" type="text" name="api_key" autocomplete="off" spellcheck={false} maxlength={200} />
          </Field>
        </details>
        <button type="submit">Sign up</button>
      </form>
      <p>
        Already have an account? <a href="/login">Log in</a>
      </p>
    </CardPage>
  );
}

export function LogInPage({ frame, email, error, next }: FormState & { next?: string }) {
  return (
    <CardPage title="Log in" frame={frame} error={error}>
      <form method="post" action={next ? `/login?next=${encodeURIComponent(next)}` : '/login'} class="stack">
        <CsrfField token={frame.csrfToken} />
        <CredentialFields email={email} newPassword={false} />
        <button type="submit">Log in</button>
      </form>
      <p>
        No account yet? <a href="/signup">Sign up</a>
      </p>
    </CardPage>
  );
}
