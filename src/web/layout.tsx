import { raw } from 'hono/html';
import type { Child } from 'hono/jsx';
import { CSRF_FIELD } from '../middleware/csrf-token';

/** What every page needs to draw its header: who is signed in and the token for the log-out form. */
export interface PageFrame {
  email: string | null;
  csrfToken: string;
}

export const SERVICE_NAME = 'Edge image API';

export function CsrfField({ token }: { token: string }) {
  return <input type="hidden" name={CSRF_FIELD} value={token} />;
}

function Navigation({ frame }: { frame: PageFrame }) {
  if (!frame.email) {
    return (
      <nav aria-label="Main">
        <a href="/docs">API reference</a>
        <a href="/login">Log in</a>
        <a href="/signup" class="button">
          Sign up
        </a>
      </nav>
    );
  }
  return (
    <nav aria-label="Main">
      <a href="/convert">Converter</a>
      <a href="/account">Account</a>
      <a href="/docs">API reference</a>
      <form method="post" action="/logout" class="inline">
        <CsrfField token={frame.csrfToken} />
        <button type="submit" class="link">
          Log out
        </button>
      </form>
    </nav>
  );
}

export function Layout({ title, frame, children, head }: { title: string; frame: PageFrame; children: Child; head?: Child }) {
  return (
    <>
      {raw('<!DOCTYPE html>')}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>{title === SERVICE_NAME ? title : `${title} · ${SERVICE_NAME}`}</title>
          <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
          <link rel="stylesheet" href="/site.css" />
          {head}
        </head>
        <body>
          <header class="site">
            <a href="/" class="brand">
              {SERVICE_NAME}
            </a>
            <Navigation frame={frame} />
          </header>
          <main>{children}</main>
        </body>
      </html>
    </>
  );
}

/** A message the page must announce: errors as alerts, confirmations as status. */
export function Notice({ kind, children }: { kind: 'error' | 'success'; children: Child }) {
  return kind === 'error' ? (
    <p role="alert" class="notice error">
      {children}
    </p>
  ) : (
    <p role="status" class="notice success">
      {children}
    </p>
  );
}

/**
 * A visible label for the control `children`, which must carry `id={id}` (and, with a hint,
 * `aria-describedby={hintId(id)}`): the hint is read as a description, not as part of the name.
 */
export function Field({ label, id, children, hint }: { label: string; id: string; children: Child; hint?: string }) {
  return (
    <div class="field">
      <label class="label" for={id}>
        {label}
      </label>
      {children}
      {hint ? (
        <span class="hint" id={hintId(id)}>
          {hint}
        </span>
      ) : null}
    </div>
  );
}

export const hintId = (id: string) => `${id}-hint`;
