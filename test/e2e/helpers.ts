/// <reference types="node" />
/**
 * Page and API helpers for the browser tests: sign-up/log-in through the forms, the account
 * page's facts and keys, one conversion through the converter page, and API calls paced to the
 * Free plan's 2 requests per second (shared by the page and the API: one Pacer per user).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { PROJECT_ROOT } from '../../src/cli/d1.ts';

export const CORPUS = path.resolve(PROJECT_ROOT, '../shared/corpus');
/** 100x68 baseline JPEG with EXIF (7,958 bytes): small and quick to convert. */
export const SMALL_JPEG = path.join(CORPUS, 'jpeg/camera/Canon_40D.jpg');
export const SMALL_JPEG_SIZE = { width: 100, height: 68 };
export const smallJpegBytes = () => readFileSync(SMALL_JPEG);

export const PASSWORD = 'correct horse battery staple';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function uniqueEmail(tag: string): string {
  return `e2e-${tag}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}@example.test`;
}

/**
 * Spaces one user's authenticated calls (API and converter page alike) at least `gapMs` apart,
 * so that no sliding one-second window holds more than 2 of them.
 */
export class Pacer {
  private next = 0;
  constructor(private readonly gapMs = 650) {}
  async turn(): Promise<void> {
    const wait = this.next - Date.now();
    if (wait > 0) await sleep(wait);
    this.next = Date.now() + this.gapMs;
  }
}

export interface ApiAnswer {
  status: number;
  headers: Headers;
  body: any;
}

/**
 * One authenticated API call; `RATE_LIMIT_EXCEEDED` is retried after Retry-After (at most 5
 * times), every other answer (DAILY_LIMIT_REACHED included) is returned as it is.
 */
export async function api(
  baseUrl: string,
  apiPath: string,
  key: string,
  pacer: Pacer,
  form?: () => FormData,
): Promise<ApiAnswer> {
  for (let attempt = 0; ; attempt++) {
    await pacer.turn();
    const response = await fetch(`${baseUrl}${apiPath}`, {
      method: form ? 'POST' : 'GET',
      headers: { Authorization: `Bearer ${key}` },
      body: form?.(),
    });
    const text = await response.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`${apiPath} answered ${response.status} with a body that is not JSON: ${text.slice(0, 300)}`);
    }
    if (response.status === 429 && body?.error?.code === 'RATE_LIMIT_EXCEEDED' && attempt < 5) {
      await sleep(Number(response.headers.get('retry-after') ?? '1') * 1000 + 100);
      continue;
    }
    return { status: response.status, headers: response.headers, body };
  }
}

/** A multipart form with one file and some text fields, as curl -F sends it. */
export function imageForm(bytes: Uint8Array, filename: string, fields: Record<string, string | number> = {}): FormData {
  const form = new FormData();
  form.append('file', new File([bytes], filename));
  for (const [name, value] of Object.entries(fields)) form.append(name, String(value));
  return form;
}

/** Clicks a form's submit button and waits for the page it leads to (full navigation) to load. */
export async function clickAndLoad(page: Page, button: Locator): Promise<void> {
  const loaded = page.waitForEvent('load', { timeout: 60_000 });
  await button.click();
  await loaded;
}

export async function signUp(page: Page, baseUrl: string, email: string, password = PASSWORD): Promise<void> {
  await page.goto(`${baseUrl}/signup`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await clickAndLoad(page, page.getByRole('button', { name: 'Sign up', exact: true }));
  if (new URL(page.url()).pathname !== '/account') {
    const alert = (await page.getByRole('alert').allInnerTexts()).join(' ');
    throw new Error(`sign-up of ${email} ended on ${page.url()}, not /account${alert ? `: ${alert}` : ''}`);
  }
}

/** Fills and submits the log-in form on the current page (must be /login). */
export async function submitLogin(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await clickAndLoad(page, page.getByRole('button', { name: 'Log in', exact: true }));
}

/** The account page's definition list, dt text -> dd text (whitespace collapsed). */
export async function accountFacts(page: Page): Promise<Record<string, string>> {
  const dl = page.locator('dl').filter({ has: page.locator('dt', { hasText: 'Used today' }) });
  const terms = await dl.locator('dt').allInnerTexts();
  const values = await dl.locator('dd').allInnerTexts();
  if (terms.length !== values.length || terms.length === 0) {
    throw new Error(`the account page's <dl> has ${terms.length} <dt> and ${values.length} <dd>`);
  }
  const squash = (text: string) => text.replace(/\s+/g, ' ').trim();
  return Object.fromEntries(terms.map((term, i) => [squash(term).replace(/:$/, ''), squash(values[i])]));
}

/** The quota part of GET /api/v1/me as numbers, read from the account page's "Used today" and "Remaining today". */
export function quotaFromFacts(facts: Record<string, string>): { used: number; max: number | null; remaining: number | null } {
  const used = /^(\d+)\b/.exec(facts['Used today'] ?? '');
  if (!used) throw new Error(`"Used today" does not start with a number: ${JSON.stringify(facts)}`);
  const max = /\bof (\d+)\b/.exec(facts['Used today']);
  const remaining = /^(\d+)\b/.exec(facts['Remaining today'] ?? '');
  return { used: Number(used[1]), max: max ? Number(max[1]) : null, remaining: remaining ? Number(remaining[1]) : null };
}

/** The keys table's row whose cell is exactly `name`. */
export function keyRow(page: Page, name: string) {
  return page.locator('tr').filter({ has: page.getByRole('cell', { name, exact: true }) });
}

/** Creates a key through the account page (which must be open) and returns the full key shown once. */
export async function createKeyInPage(page: Page, name: string): Promise<string> {
  await page.getByLabel('Key name').fill(name);
  await clickAndLoad(page, page.getByRole('button', { name: 'Create API key' }));
  const shown = page.locator('#new-api-key');
  await shown.waitFor({ state: 'visible', timeout: 30_000 });
  const key = (await shown.innerText()).trim();
  if (!/^imgk_[A-Za-z0-9]{32}$/.test(key)) throw new Error(`#new-api-key does not hold a key: ${JSON.stringify(key)}`);
  return key;
}

export type Operation = 'convert' | 'crop' | 'resize' | 'remove-metadata' | 'transform';

/** The converter's submit button is named after the chosen operation. */
export const OPERATION_BUTTON: Record<Operation, string> = { convert: 'Convert', crop: 'Crop', resize: 'Resize', 'remove-metadata': 'Remove metadata', transform: 'Apply steps' };
export type FileInput = string | { name: string; mimeType: string; buffer: Buffer };

export interface ConvertInPage {
  file: FileInput;
  operation?: Operation;
  /** Value of the Format select: '' (same as input), webp, avif, jpg, png. */
  format?: string;
  quality?: number;
  crop?: { x: number; y: number; width: number; height: number };
  resize?: { width?: number; height?: number; keepAspectRatio?: boolean; fit?: string; position?: string };
}

export type PageOutcome =
  | { ok: true; href: string; text: string }
  | { ok: false; alert: string };

const visibleAlertText = async (page: Page): Promise<string> => {
  const texts: string[] = [];
  for (const alert of await page.getByRole('alert').all()) {
    if (await alert.isVisible()) texts.push((await alert.innerText()).trim());
  }
  return texts.filter(Boolean).join('\n');
};

export const resultSection = (page: Page) =>
  page.locator('section, div, article').filter({ has: page.getByRole('heading', { name: 'Result', exact: true }) }).last();
export const downloadLink = (page: Page) => page.getByRole('link', { name: /^Download/ });

/** Fills the converter form (the page must be /convert) without submitting it. */
export async function fillConverter(page: Page, options: ConvertInPage): Promise<void> {
  await page.getByLabel(/^Image/).setInputFiles(options.file);
  await page.getByLabel('Operation').selectOption(options.operation ?? 'convert');
  if (options.format !== undefined) await page.getByLabel('Format').selectOption(options.format);
  if (options.quality !== undefined) await page.getByLabel('Quality').fill(String(options.quality));
  if (options.crop) {
    await page.getByLabel('Left', { exact: true }).fill(String(options.crop.x));
    await page.getByLabel('Top', { exact: true }).fill(String(options.crop.y));
    await page.getByLabel('Crop width', { exact: true }).fill(String(options.crop.width));
    await page.getByLabel('Crop height', { exact: true }).fill(String(options.crop.height));
  }
  if (options.resize) {
    const { width, height, keepAspectRatio } = options.resize;
    await page.getByLabel('Width', { exact: true }).fill(width === undefined ? '' : String(width));
    await page.getByLabel('Height', { exact: true }).fill(height === undefined ? '' : String(height));
    if (keepAspectRatio !== undefined) await page.getByLabel('Keep aspect ratio').setChecked(keepAspectRatio);
    if (options.resize.fit !== undefined) await page.getByLabel('Fit', { exact: true }).selectOption(options.resize.fit);
    if (options.resize.position !== undefined) await page.getByLabel('Position', { exact: true }).selectOption(options.resize.position);
  }
}

/**
 * Runs one operation through the converter page (which must be open) and waits for its
 * outcome: a new result (its Download link's href differs from the previous one) or a visible
 * role=alert once the progress indicator is gone (the page clears the alert when the form is
 * submitted; some errors, like an oversized file, are found before anything is sent). A
 * rate-limit alert is retried after a second (at most 5 times).
 */
export async function convertInPage(page: Page, pacer: Pacer, options: ConvertInPage): Promise<PageOutcome> {
  await fillConverter(page, options);
  for (let attempt = 0; ; attempt++) {
    const before = (await downloadLink(page).count()) ? await downloadLink(page).first().getAttribute('href') : null;
    await pacer.turn();
    await page.getByRole('button', { name: OPERATION_BUTTON[options.operation ?? 'convert'], exact: true }).click();
    const deadline = Date.now() + 90_000;
    let outcome: PageOutcome | undefined;
    while (!outcome) {
      if (Date.now() > deadline) throw new Error('the converter page showed neither a new result nor an alert within 90 s');
      const busy = await page.locator('progress').isVisible();
      const alert = busy ? '' : await visibleAlertText(page);
      if (alert) {
        outcome = { ok: false, alert };
        break;
      }
      const link = downloadLink(page);
      if (!busy && (await link.count()) && (await link.first().isVisible())) {
        const href = await link.first().getAttribute('href');
        if (href && href !== before) {
          outcome = { ok: true, href, text: (await resultSection(page).innerText()).replace(/\s+/g, ' ').trim() };
          break;
        }
      }
      await sleep(100);
    }
    if (!outcome.ok && /Too many (requests|concurrent)/.test(outcome.alert) && attempt < 5) {
      await sleep(1_100);
      continue;
    }
    return outcome;
  }
}
