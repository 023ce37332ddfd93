import { Layout, type PageFrame } from '../layout';

/** Swagger UI over the live OpenAPI document; its files are static assets of this Worker (no CDN). */
export function DocsPage({ frame }: { frame: PageFrame }) {
  return (
    <Layout
      title="API reference"
      frame={frame}
      head={
        <>
          <link rel="stylesheet" href="/docs/assets/swagger-ui.css" />
          <script src="/docs/assets/swagger-ui-bundle.js" defer />
          <script src="/docs/init.js" defer />
        </>
      }
    >
      <h1>API reference</h1>
      <p class="hint">
        Send your API key as <code>Authorization: Bearer &lt;API_KEY&gt;</code> (use <strong>Authorize</strong> below to try calls from this
        page). The document itself is at <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.
      </p>
      <div id="swagger-ui" data-url="/api/v1/openapi.json" />
    </Layout>
  );
}
