import { SELF } from 'cloudflare:test';

/**
 * A browser stand-in for the web pages: keeps cookies, sends the page's Origin on posts (as
 * browsers do), does not follow redirects, and can read the CSRF token out of a page.
 */
export class WebClient {
  readonly cookies = new Map<string, string>();

  constructor(
    readonly origin = 'http://api.test',
    /** The client address the Worker sees (CF-Connecting-IP); each client its own by default, so throttles don't leak between tests. */
    readonly address = `198.51.100.${Math.floor(Math.random() * 254) + 1}-${crypto.randomUUID().slice(0, 4)}`,
    /** The Worker's own fetch, or a test's app (clockedClient) to move time by hand. */
    private readonly fetcher: (url: string, init?: RequestInit) => Promise<Response> = (url, init) => SELF.fetch(url, init),
  ) {}

  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('CF-Connecting-IP', this.address);
    if (this.cookies.size > 0 && !headers.has('Cookie')) headers.set('Cookie', [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    const response = await this.fetcher(this.origin + path, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const [name, value] = [pair.slice(0, pair.indexOf('=')).trim(), pair.slice(pair.indexOf('=') + 1).trim()];
      const expired = attributes.some((attribute) => /^\s*max-age=0\s*$/i.test(attribute) || /^\s*expires=Thu, 01 Jan 1970/i.test(attribute));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  /** The session cookie's name: `__Host-session` on a real host, `session` on localhost (src/web/cookies.ts). */
  get sessionCookieName(): string {
    return /^http:\/\/(localhost|127\.0\.0\.1)(:|$)/.test(this.origin) ? 'session' : '__Host-session';
  }

  get session(): string | undefined {
    return this.cookies.get(this.sessionCookieName);
  }

  set session(id: string) {
    this.cookies.set(this.sessionCookieName, id);
  }

  get(path: string): Promise<Response> {
    return this.request(path);
  }

  /** Posts a url-encoded form; `csrf_token` is taken from `tokenFrom` (a page path) unless given or set to null. */
  async postForm(path: string, fields: Record<string, string>, options: { token?: string | null; tokenFrom?: string; origin?: string | null } = {}): Promise<Response> {
    const body = new URLSearchParams(fields);
    const token = options.token === undefined ? await this.csrfToken(options.tokenFrom ?? '/account') : options.token;
    if (token !== null) body.set('csrf_token', token);
    const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
    const origin = options.origin === undefined ? this.origin : options.origin;
    if (origin !== null) headers.Origin = origin;
    return this.request(path, { method: 'POST', body, headers });
  }

  async csrfToken(pagePath: string): Promise<string> {
    const page = await (await this.get(pagePath)).text();
    const token = /name="csrf_token" value="([^"]+)"/.exec(page)?.[1] ?? /name="csrf-token" content="([^"]+)"/.exec(page)?.[1];
    if (!token) throw new Error(`no CSRF token on ${pagePath}`);
    return token;
  }

  async signUp(email: string, password = 'a long enough passphrase', extra: Record<string, string> = {}): Promise<Response> {
    return this.postForm('/signup', { email, password, ...extra }, { tokenFrom: '/signup' });
  }

  async logIn(email: string, password: string, path = '/login'): Promise<Response> {
    return this.postForm(path, { email, password }, { tokenFrom: '/login' });
  }
}

let accounts = 0;
export const uniqueEmail = (label = 'web') => `${label}${++accounts}-${crypto.randomUUID().slice(0, 8)}@example.test`;

/** The text of the page's role="alert" message, or null. */
export function alertText(html: string): string | null {
  const match = /role="alert"[^>]*>([^<]*)</.exec(html);
  return match ? decodeEntities(match[1]) : null;
}

export function decodeEntities(text: string): string {
  return text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}
