declare namespace Cloudflare {
  interface Env {
    /** Test-only service binding that serves files of ../shared/corpus by relative path. */
    CORPUS: Fetcher;
  }
}

declare module '*?raw' {
  const text: string;
  export default text;
}
