declare namespace Cloudflare {
  interface Env {
    /** Test-only service binding that serves files of ../shared/corpus by relative path. */
    CORPUS: Fetcher;
    /** Test-only service binding that serves files of test/fixtures by relative path. */
    FIXTURES: Fetcher;
    /** Test-only service binding: POST an image, get sharp's colour-managed, upright RGBA (test/support/reference-decoder.ts). */
    REFERENCE: Fetcher;
    /** Full-size inputs made from the corpus photos (test/support/large-inputs.ts): GET /<name>. */
    LARGE: Fetcher;
  }
}

declare module '*?raw' {
  const text: string;
  export default text;
}
