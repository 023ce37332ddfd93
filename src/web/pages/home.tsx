import { PLANS } from '../../plans';
import { Layout, SERVICE_NAME, type PageFrame } from '../layout';

/** `origin`: where this page was served from, so the example can be pasted as it is. */
export function HomePage({ frame, origin }: { frame: PageFrame; origin: string }) {
  const free = PLANS.free;
  const pro = PLANS.pro;
  return (
    <Layout title={SERVICE_NAME} frame={frame}>
      <section class="hero">
        <h1>{SERVICE_NAME}</h1>
        <p class="lead">
          Convert, crop, resize and strip metadata from JPEG, PNG, WebP and AVIF images, through a small HTTP API or right here in your
          browser. Every call answers with JSON and a download link.
        </p>
        <p class="actions">
          {frame.email ? (
            <a href="/convert" class="button">
              Open the converter
            </a>
          ) : (
            <a href="/signup" class="button">
              Create a free account
            </a>
          )}
          <a href="/docs">Read the API reference</a>
        </p>
      </section>
      <section>
        <h2>What it does</h2>
        <ul class="features">
          <li>
            <strong>Convert</strong> between JPEG, PNG, WebP and AVIF, colour-managed to sRGB.
          </li>
          <li>
            <strong>Crop</strong> a rectangle and <strong>resize</strong> with Lanczos-3, in the orientation the photo is shown in.
          </li>
          <li>
            <strong>Remove metadata</strong> (EXIF, GPS, XMP, ICC, comments) without re-encoding: the pixels stay exactly as they were.
          </li>
        </ul>
        <pre class="example">
          <code>{`curl -H "Authorization: Bearer $API_KEY" \\
  -F file=@photo.jpg -F format=webp \\
  ${origin}/api/v1/convert`}</code>
        </pre>
      </section>
      <section>
        <h2>Plans</h2>
        <table>
          <thead>
            <tr>
              <th scope="col">Plan</th>
              <th scope="col">Conversions per day</th>
              <th scope="col">Requests per second</th>
              <th scope="col">Largest file</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <th scope="row">Free</th>
              <td>{free.dailyConversions}</td>
              <td>{free.requestsPerSecond}</td>
              <td>{free.maxFileSizeMb} MB</td>
            </tr>
            <tr>
              <th scope="row">Pro</th>
              <td>unlimited</td>
              <td>{pro.requestsPerSecond}</td>
              <td>{pro.maxFileSizeMb} MB</td>
            </tr>
          </tbody>
        </table>
        <p class="hint">The daily quota is shared between the converter on this site and the API, and resets at 00:00 UTC.</p>
      </section>
    </Layout>
  );
}
