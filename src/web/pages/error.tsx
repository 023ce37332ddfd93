import { Layout, Notice, type PageFrame } from '../layout';

const TITLES: Record<number, string> = { 401: 'Please log in', 403: 'Not allowed', 404: 'Not found', 429: 'Too many requests' };

export function ErrorPage({ frame, status, message, requestId }: { frame: PageFrame; status: number; message: string; requestId: string }) {
  const title = TITLES[status] ?? (status >= 500 ? 'Something went wrong' : 'That did not work');
  return (
    <Layout title={title} frame={frame}>
      <section class="card narrow">
        <h1>{title}</h1>
        <Notice kind="error">{message}</Notice>
        <p class="hint">
          If you report this, mention request <code>{requestId}</code>.
        </p>
        <p>
          <a href="/">Back to the home page</a>
        </p>
      </section>
    </Layout>
  );
}
