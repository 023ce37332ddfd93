import type { AccountSummary } from '../../account';
import type { ResultRow } from '../../db/results';
import type { ApiKeyRow } from '../../db/users';
import { CsrfField, Field, Layout, Notice, type PageFrame } from '../layout';
import { formatBytes, formatDate } from '../format';

export interface AccountView {
  frame: PageFrame;
  summary: AccountSummary;
  keys: ApiKeyRow[];
  results: (ResultRow & { downloadUrl: string })[];
  /** Shown once, right after it was made; never stored. */
  newKey?: { name: string; key: string };
  notice?: { kind: 'error' | 'success'; text: string };
}

function Usage({ quota }: { quota: AccountSummary['quota'] }) {
  if (quota.is_unlimited) return <>{quota.daily_used} conversions (unlimited)</>;
  return (
    <>
      {quota.daily_used} of {quota.daily_max} conversions
      <meter min={0} max={quota.daily_max ?? 0} value={quota.daily_used} aria-hidden="true" />
    </>
  );
}

function Summary({ summary }: { summary: AccountSummary }) {
  const { user, quota, rate_limit } = summary;
  return (
    <dl class="summary">
      <dt>Email</dt>
      <dd>{user.email}</dd>
      <dt>Plan</dt>
      <dd>{user.is_pro ? 'Pro' : 'Free'}</dd>
      <dt>Subscription ends</dt>
      <dd>{user.subscription_ends_at ? formatDate(user.subscription_ends_at) : user.is_pro ? 'never' : '—'}</dd>
      <dt>Used today</dt>
      <dd>
        <Usage quota={quota} />
      </dd>
      <dt>Remaining today</dt>
      <dd>{quota.daily_remaining === null ? 'unlimited' : `${quota.daily_remaining} conversions`}</dd>
      <dt>Rate limit</dt>
      <dd>{rate_limit.requests_per_second} requests per second</dd>
      <dt>Max file size</dt>
      <dd>{quota.max_file_size_mb} MB</dd>
    </dl>
  );
}

function NewKey({ name, apiKey }: { name: string; apiKey: string }) {
  return (
    <div class="new-key" id="new-key" role="status">
      <p>
        <strong>Your new API key “{name}”.</strong> Copy it now: it is shown only this once, and not again when you reload this page.
      </p>
      <p class="key-line">
        <code id="new-api-key">{apiKey}</code>
        <button type="button" data-copy="new-api-key">
          Copy
        </button>
      </p>
    </div>
  );
}

function KeyTable({ keys, csrfToken }: { keys: ApiKeyRow[]; csrfToken: string }) {
  if (keys.length === 0) return <p>You have no API keys yet.</p>;
  return (
    <div class="scroll">
      <table class="stacked">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Prefix</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr>
              <td data-label="Name">{key.name}</td>
              <td data-label="Prefix">
                <code>{key.prefix}…</code>
              </td>
              <td data-label="Created">{formatDate(key.created_at)}</td>
              <td data-label="Last used">{key.last_used_at ? formatDate(key.last_used_at) : 'never'}</td>
              <td class="actions-cell">
                <form method="post" action={`/account/keys/${key.id}/revoke`}>
                  <CsrfField token={csrfToken} />
                  <button type="submit" class="danger">
                    Revoke<span class="visually-hidden"> key “{key.name}”</span>
                  </button>
                </form>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function RecentResults({ results }: { results: AccountView['results'] }) {
  if (results.length === 0) return <p>No conversions in the last day. Results can be downloaded until their link expires.</p>;
  return (
    <div class="scroll">
      <table class="stacked">
        <thead>
          <tr>
            <th scope="col">File</th>
            <th scope="col">Operation</th>
            <th scope="col">Size</th>
            <th scope="col">Made</th>
            <th scope="col">Link expires</th>
          </tr>
        </thead>
        <tbody>
          {results.map((result) => (
            <tr>
              <td data-label="File">
                <a href={result.downloadUrl} download={result.filename}>
                  {result.filename}
                </a>
              </td>
              <td data-label="Operation">{result.operation}</td>
              <td data-label="Size">
                {result.width}×{result.height}, {formatBytes(result.size)}
              </td>
              <td data-label="Made">{formatDate(result.created_at)}</td>
              <td data-label="Link expires">{formatDate(result.expires_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function AccountPage({ frame, summary, keys, results, newKey, notice }: AccountView) {
  return (
    <Layout title="Account" frame={frame} head={<script src="/account.js" defer />}>
      <h1>Account</h1>
      {notice ? <Notice kind={notice.kind}>{notice.text}</Notice> : null}
      <section>
        <h2>Plan and quota</h2>
        <Summary summary={summary} />
      </section>
      <section>
        <h2>API keys</h2>
        {newKey ? <NewKey name={newKey.name} apiKey={newKey.key} /> : null}
        <KeyTable keys={keys} csrfToken={frame.csrfToken} />
        <form method="post" action="/account/keys" class="inline-form">
          <CsrfField token={frame.csrfToken} />
          <Field label="Key name" id="key-name">
            <input id="key-name" type="text" name="name" required maxlength={64} placeholder="e.g. laptop, CI, website" />
          </Field>
          <button type="submit">Create API key</button>
        </form>
      </section>
      <section>
        <h2>Recent conversions</h2>
        <RecentResults results={results} />
      </section>
    </Layout>
  );
}
