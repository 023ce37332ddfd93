/// <reference types="node" />
/**
 * The web pages end to end: a real headless Chromium against `npm run dev` (wrangler dev).
 * One dev server and one browser for the whole file; each user has their own browser context.
 *
 *   npx vitest run --config test/vitest.config.ts --project browser
 *
 * Screenshots (desktop 1280x800 and phone 390x844) go to test-output/screenshots/.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startDevServer, type DevServer } from '../node/dev-server.ts';
import { BROWSER_SKIP, assertChromium, launchBrowser, screenshot, type StorageState } from './browser.ts';
import {
  PASSWORD,
  Pacer,
  SMALL_JPEG,
  SMALL_JPEG_SIZE,
  accountFacts,
  api,
  clickAndLoad,
  convertInPage,
  createKeyInPage,
  downloadLink,
  fillConverter,
  imageForm,
  keyRow,
  quotaFromFacts,
  resultSection,
  signUp,
  sleep,
  smallJpegBytes,
  submitLogin,
  uniqueEmail,
} from './helpers.ts';

const DAILY_LIMIT_MESSAGE =
  'Daily limit reached: the free plan allows 15 conversions per day and 0 remain today.';

describe.skipIf(BROWSER_SKIP)('web pages in a real browser', () => {
  let server: DevServer;
  let browser: Browser;
  let url: string;
  /** Uncaught script errors and failed page resources (scripts, styles, images, fonts), from every page. */
  const pageProblems: string[] = [];

  beforeAll(async () => {
    assertChromium(); // under CI=true a missing Chromium fails here, before the server starts
    browser = await launchBrowser(); // first: afterAll closes it even if the server fails to start
    server = await startDevServer();
    url = server.url;
  });

  afterAll(async () => {
    await browser?.close().catch((error) => console.error('closing the browser failed:', error));
    await server?.stop();
  });

  // A failing test shows what the dev server printed meanwhile (a 500's stack, say).
  beforeEach(({ onTestFailed }) => {
    const from = server?.output().length ?? 0;
    onTestFailed(() => {
      const printed = server?.output().slice(from) ?? '';
      if (printed) console.error(`dev server output during this test (last 8 kB):\n${printed.slice(-8_000)}`);
    });
  });

  /** A fresh desktop context whose pages report script errors and broken resources (closed with the browser). */
  async function newContext(storageState?: StorageState): Promise<BrowserContext> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, storageState });
    context.on('page', watchPage);
    return context;
  }

  function watchPage(page: Page) {
    page.on('pageerror', (error) => pageProblems.push(`${page.url()}: uncaught ${error.message}`));
    page.on('response', (response) => {
      const type = response.request().resourceType();
      if (response.status() >= 400 && ['script', 'stylesheet', 'image', 'font'].includes(type)) {
        pageProblems.push(`${page.url()}: ${type} ${response.url()} answered ${response.status()}`);
      }
    });
    page.on('requestfailed', (request) => {
      // ERR_ABORTED: a load cut short by the next navigation (or a 4xx/5xx already reported above).
      if (request.resourceType() !== 'document' && request.failure()?.errorText !== 'net::ERR_ABORTED') pageProblems.push(`${page.url()}: ${request.url()} failed: ${request.failure()?.errorText}`);
    });
  }

  const sessionCookie = async (context: BrowserContext) => {
    const cookie = (await context.cookies(url)).find((c) => c.name === 'session' || c.name === '__Host-session');
    if (!cookie) throw new Error(`no session cookie; cookies: ${JSON.stringify(await context.cookies(url))}`);
    return cookie;
  };

  // The main Free user (keys, converter, errors); the quota user and the security user are separate.
  const userA = { email: uniqueEmail('keys'), pacer: new Pacer() };
  let contextA: BrowserContext;
  let pageA: Page;
  let keyA: string; // a live key of user A, for /me checks

  it('home, sign-up and log-in pages: headings, labelled fields, the logged-out nav', async () => {
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(`${url}/`);
    expect(await page.locator('h1').count()).toBe(1);
    expect((await page.locator('h1').innerText()).trim()).not.toBe('');
    expect(await page.getByRole('link', { name: 'API reference' }).first().getAttribute('href')).toMatch(/\/docs$/);
    expect(await page.getByRole('link', { name: 'Sign up' }).first().getAttribute('href')).toMatch(/\/signup$/);
    expect(await page.getByRole('link', { name: 'Log in' }).first().getAttribute('href')).toMatch(/\/login$/);
    const nav = page.getByRole('navigation');
    await expect.poll(() => nav.getByRole('link', { name: 'Sign up' }).count()).toBeGreaterThan(0);
    expect(await nav.getByRole('link', { name: 'Log in' }).count()).toBeGreaterThan(0);
    expect(await nav.getByRole('link', { name: 'Account' }).count()).toBe(0);
    // The example can be pasted as it is: it names the host the page came from.
    expect(await page.locator('pre.example').innerText()).toContain(`${url}/api/v1/convert`);
    const icon = await page.locator('link[rel=icon]').getAttribute('href');
    const iconResponse = await fetch(new URL(icon!, url));
    expect(iconResponse.status).toBe(200);
    expect(iconResponse.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    await iconResponse.body?.cancel();

    await page.goto(`${url}/signup`);
    expect(await page.getByLabel('Email').getAttribute('type')).toBe('email');
    expect(await page.getByLabel('Password').getAttribute('type')).toBe('password');
    expect(await page.getByLabel('Email').getAttribute('name')).toBe('email');
    expect(await page.getByLabel('Password').getAttribute('name')).toBe('password');
    const details = page.locator('details').filter({ hasText: 'Account created by the operator?' });
    expect(await details.count()).toBe(1);
    expect(await details.getByLabel('API key').getAttribute('name')).toBe('api_key');
    expect(await page.locator('form input[type=hidden][name=csrf_token]').count()).toBeGreaterThan(0);

    await page.goto(`${url}/login`);
    expect(await page.getByLabel('Email').getAttribute('name')).toBe('email');
    expect(await page.getByLabel('Password').getAttribute('type')).toBe('password');
    expect(await page.getByRole('button', { name: 'Log in', exact: true }).count()).toBe(1);

    // Pages that need a session send the browser to the log-in page.
    for (const path of ['/account', '/convert']) {
      await page.goto(`${url}${path}`);
      expect(new URL(page.url()).pathname, path).toBe('/login');
      expect(new URL(page.url()).searchParams.get('next'), path).toBe(path);
    }
  });

  it('signs up a Free user: weak password and taken e-mail are refused in the page, success lands on /account', async () => {
    contextA = await newContext();
    pageA = await contextA.newPage();

    await pageA.goto(`${url}/signup`);
    await pageA.getByLabel('Email').fill(userA.email);
    await pageA.getByLabel('Password').fill('short');
    // The browser's own check (minlength) would stop the post; switch it off to reach the server's.
    await pageA.locator('form').filter({ has: pageA.getByLabel('Password') }).evaluate((form) => form.setAttribute('novalidate', ''));
    await pageA.getByRole('button', { name: 'Sign up', exact: true }).click();
    await pageA.getByRole('alert').filter({ hasText: 'Choose a password of at least 10 characters' }).waitFor();
    expect(new URL(pageA.url()).pathname).not.toBe('/account');

    await signUp(pageA, url, userA.email);
    expect(new URL(pageA.url()).pathname).toBe('/account');
    expect((await pageA.locator('h1').innerText()).trim()).toBe('Account');
    const nav = pageA.getByRole('navigation');
    expect(await nav.getByRole('link', { name: 'Converter' }).getAttribute('href')).toMatch(/\/convert$/);
    expect(await nav.getByRole('link', { name: 'Account' }).getAttribute('href')).toMatch(/\/account$/);
    expect(await nav.getByRole('button', { name: 'Log out' }).count()).toBe(1);
    const facts = await accountFacts(pageA);
    expect(facts).toMatchObject({ Email: userA.email, Plan: 'Free' });
    expect(facts['Rate limit']).toContain('2 requests per second');
    expect(facts['Max file size']).toContain('10 MB');
    expect(quotaFromFacts(facts)).toEqual({ used: 0, max: 15, remaining: 15 });

    // The same e-mail again, from a logged-out context.
    const other = await (await newContext()).newPage();
    await other.goto(`${url}/signup`);
    await other.getByLabel('Email').fill(userA.email);
    await other.getByLabel('Password').fill(PASSWORD);
    await other.getByRole('button', { name: 'Sign up', exact: true }).click();
    await other.getByRole('alert').filter({ hasText: 'already has an account' }).waitFor();
    expect(new URL(other.url()).pathname).not.toBe('/account');
  });

  it('creates an API key in the page that works with the API, matches /me, is shown once, and is dead once revoked', async () => {
    await pageA.goto(`${url}/account`);
    const key = await createKeyInPage(pageA, 'laptop');
    // "Copy" puts the key on the clipboard.
    await contextA.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
    await pageA.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => pageA.evaluate('navigator.clipboard.readText()')).toBe(key);
    const row = keyRow(pageA, 'laptop');
    expect(await row.count()).toBe(1);
    expect(await row.innerText()).toContain(key.slice(0, 12));

    const me = await api(url, '/api/v1/me', key, userA.pacer);
    expect(me.status).toBe(200);
    expect(me.body.data.user).toMatchObject({ email: userA.email, plan: 'free' });
    await pageA.goto(`${url}/account`);
    const facts = await accountFacts(pageA);
    expect(quotaFromFacts(facts)).toEqual({
      used: me.body.data.quota.daily_used,
      max: me.body.data.quota.daily_max,
      remaining: me.body.data.quota.daily_remaining,
    });
    expect(facts['Rate limit']).toContain(`${me.body.data.rate_limit.requests_per_second} requests per second`);
    expect(facts['Max file size']).toContain(`${me.body.data.quota.max_file_size_mb} MB`);

    // Shown once: a fresh GET of /account has neither the banner nor the key anywhere in it.
    expect(await pageA.locator('#new-api-key').count()).toBe(0);
    expect(await pageA.content()).not.toContain(key);
    await pageA.reload();
    expect(await pageA.locator('#new-api-key').count()).toBe(0);
    expect(await pageA.content()).not.toContain(key);
    expect(await keyRow(pageA, 'laptop').count()).toBe(1);

    // Every revoke button says which key it revokes.
    const revokeNames = await pageA.getByRole('button', { name: /^Revoke/ }).evaluateAll((buttons) => buttons.map((button: any) => button.textContent.trim()));
    expect(revokeNames).toContain('Revoke key “laptop”');
    // Revoke it with the button in its row.
    pageA.once('dialog', (dialog) => void dialog.accept());
    await clickAndLoad(pageA, pageA.getByRole('button', { name: 'Revoke key “laptop”', exact: true }));
    await expect.poll(() => keyRow(pageA, 'laptop').count(), { timeout: 15_000 }).toBe(0);
    const revoked = await api(url, '/api/v1/me', key, userA.pacer);
    expect(revoked.status).toBe(401);
    expect(revoked.body.error.code).toBe('UNAUTHORIZED');

    // A second key for the checks below. Reloading the page that shows it makes no second key
    // (the form post was answered with a redirect) and shows the key no more.
    await pageA.goto(`${url}/account`);
    keyA = await createKeyInPage(pageA, 'checks');
    const keyRows = pageA.locator('section').filter({ has: pageA.getByRole('heading', { name: 'API keys' }) }).locator('tbody tr');
    const keysBefore = await keyRows.count();
    const posts: string[] = [];
    pageA.on('request', (request) => void (request.method() === 'POST' && posts.push(request.url())));
    await pageA.reload();
    expect(posts).toEqual([]);
    expect(await keyRows.count()).toBe(keysBefore);
    expect(await pageA.locator('#new-api-key').count()).toBe(0);
    expect(await pageA.content()).not.toContain(keyA);
    expect((await api(url, '/api/v1/me', keyA, userA.pacer)).status).toBe(200);
  });

  it('converts, crops and resizes an image in the page; the preview loads and the download is the real file', async () => {
    // A fresh context: opening /convert logged out goes through the log-in page and back.
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(`${url}/convert`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await submitLogin(page, userA.email, PASSWORD);
    expect(new URL(page.url()).pathname).toBe('/convert');

    // The form as the contract describes it.
    const operation = page.getByLabel('Operation');
    const options = await operation.locator('option').evaluateAll((list) => list.map((o: any) => [o.value, o.textContent.trim()]));
    expect(options).toEqual([['convert', 'Convert'], ['crop', 'Crop'], ['resize', 'Resize'], ['remove-metadata', 'Remove metadata'], ['transform', 'Several steps']]);
    const formats = await page.getByLabel('Format').locator('option').evaluateAll((list) => list.map((o: any) => [o.value, o.textContent.trim()]));
    expect(formats).toEqual([['', 'Same as input'], ['webp', 'WebP'], ['avif', 'AVIF'], ['jpg', 'JPEG'], ['png', 'PNG'], ['best', 'Best: the smallest of WebP, AVIF and JPEG']]);
    expect(await page.getByLabel(/^Image/).getAttribute('type')).toBe('file');
    expect(await page.getByLabel('Quality').getAttribute('type')).toBe('number');
    await operation.selectOption('convert');
    expect(await page.getByLabel('Left', { exact: true }).isVisible()).toBe(false);
    expect(await page.getByLabel('Width', { exact: true }).isVisible()).toBe(false);
    await operation.selectOption('crop');
    for (const label of ['Left', 'Top', 'Crop width', 'Crop height']) expect(await page.getByLabel(label, { exact: true }).isVisible(), label).toBe(true);
    expect(await page.getByLabel('Width', { exact: true }).isVisible()).toBe(false);
    await operation.selectOption('resize');
    for (const label of ['Width', 'Height', 'Keep aspect ratio']) expect(await page.getByLabel(label, { exact: true }).isVisible(), label).toBe(true);
    expect(await page.getByLabel('Left', { exact: true }).isVisible()).toBe(false);

    // The format follows the operation (convert: WebP; the others keep the input's format, so
    // removing metadata never re-encodes), a format someone chose stays, and the button says what it does.
    const format = page.getByLabel('Format');
    const submit = page.locator('#converter button[type=submit]');
    const formOf = async (name: string) => ({ format: await format.inputValue(), button: (await submit.innerText()).trim(), name });
    const seen: Awaited<ReturnType<typeof formOf>>[] = [];
    for (const name of ['convert', 'crop', 'resize', 'remove-metadata', 'convert']) {
      await operation.selectOption(name);
      seen.push(await formOf(name));
    }
    expect(seen).toEqual([
      { name: 'convert', format: 'webp', button: 'Convert' },
      { name: 'crop', format: '', button: 'Crop' },
      { name: 'resize', format: '', button: 'Resize' },
      { name: 'remove-metadata', format: '', button: 'Remove metadata' },
      { name: 'convert', format: 'webp', button: 'Convert' },
    ]);
    await operation.selectOption('resize');
    await format.selectOption('png');
    await operation.selectOption('crop');
    expect(await format.inputValue()).toBe('png');
    await format.selectOption('');
    await operation.selectOption('convert');

    // The chosen image: its format, size in pixels and bytes, and a preview.
    await page.getByLabel(/^Image/).setInputFiles(SMALL_JPEG);
    await expect.poll(() => page.locator('#image-facts').innerText()).toBe('Canon_40D.jpg: JPEG, 100 × 68 pixels, 7.8 KB');
    const chosenPreview = page.getByAltText('Preview of the chosen image');
    expect(await chosenPreview.evaluate((img: any) => [img.naturalWidth, img.naturalHeight])).toEqual([100, 68]);

    // Convert to WebP, with the upload held back 1.5 s so the progress indicator is sure to show.
    await fillConverter(page, { file: SMALL_JPEG, operation: 'convert', format: 'webp' });
    await page.route(`${url}/**`, async (route) => {
      if (route.request().method() === 'POST') await sleep(1_500);
      await route.continue();
    });
    await userA.pacer.turn();
    await page.getByRole('button', { name: 'Convert', exact: true }).click();
    const progress = page.locator('progress');
    await progress.waitFor({ state: 'visible', timeout: 5_000 });
    const status = page.getByRole('status').filter({ hasText: 'Converting…' });
    expect(await status.count()).toBeGreaterThan(0);
    const link = downloadLink(page);
    await link.waitFor({ state: 'visible', timeout: 60_000 });
    await page.unrouteAll();
    await expect.poll(() => progress.isVisible()).toBe(false);
    expect(await page.getByRole('alert').filter({ hasText: /\S/ }).count()).toBe(0);

    const result = resultSection(page);
    const resultText = (await result.innerText()).replace(/\s+/g, ' ');
    expect(resultText).toMatch(/webp/i);
    expect(resultText).toMatch(new RegExp(`${SMALL_JPEG_SIZE.width}\\s*[×x]\\s*${SMALL_JPEG_SIZE.height}`));
    expect(resultText).toMatch(/\d[\d,.]*\s*(bytes|B|kB|KB|KiB)\b/);
    const preview = page.getByAltText('Preview of the result');
    await expect
      .poll(() => preview.evaluate((img: any) => (img.complete ? img.naturalWidth : 0)), { timeout: 20_000 })
      .toBe(SMALL_JPEG_SIZE.width);

    const href = (await link.getAttribute('href'))!;
    expect(new URL(href, url).pathname).toMatch(/^\/download\/[0-9a-f]{32}\/webp\/Canon_40D\.webp$/);
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toBe('Canon_40D.webp');
    const bytes = readFileSync((await download.path())!);
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(bytes.subarray(8, 12).toString('latin1')).toBe('WEBP');
    expect(bytes.readUInt32LE(4) + 8).toBe(bytes.length);

    // Crop 40x30 at (10, 5), chosen by dragging across the preview; the numbers follow the
    // pointer, and the box follows typed numbers.
    await operation.selectOption('crop');
    const cropBox = page.locator('#crop-box');
    expect(await cropBox.isVisible()).toBe(true);
    const field = (label: string) => page.getByLabel(label, { exact: true });
    expect([await field('Left').inputValue(), await field('Top').inputValue(), await field('Crop width').inputValue(), await field('Crop height').inputValue()]).toEqual(['0', '0', '100', '68']);
    await field('Left').fill('25');
    await expect.poll(() => cropBox.evaluate((box: any) => box.style.left)).toBe('25%');
    // The result above made the page taller: the preview may have scrolled out of the window.
    await chosenPreview.scrollIntoViewIfNeeded();
    const frame = (await chosenPreview.boundingBox())!;
    const at = (x: number, y: number) => [frame.x + (x * frame.width) / 100, frame.y + (y * frame.height) / 68] as const;
    await page.mouse.move(...at(10, 5));
    await page.mouse.down();
    await page.mouse.move(...at(30, 20), { steps: 4 });
    await page.mouse.move(...at(50, 35), { steps: 4 });
    await page.mouse.up();
    expect([await field('Left').inputValue(), await field('Top').inputValue(), await field('Crop width').inputValue(), await field('Crop height').inputValue()]).toEqual(['10', '5', '40', '30']);
    expect(await cropBox.evaluate((box: any) => [box.style.left, box.style.width])).toEqual(['10%', '40%']);
    const crop = await convertInPage(page, userA.pacer, { file: SMALL_JPEG, operation: 'crop', format: '' });
    expect(crop.ok, JSON.stringify(crop)).toBe(true);
    if (crop.ok) {
      expect(crop.text).toMatch(/40\s*[×x]\s*30/);
      expect(crop.text).toMatch(/jpe?g/i);
    }
    await expect.poll(() => preview.evaluate((img: any) => (img.complete ? img.naturalWidth : 0)), { timeout: 20_000 }).toBe(40);

    const resize = await convertInPage(page, userA.pacer, { file: SMALL_JPEG, operation: 'resize', format: 'png', resize: { width: 50, keepAspectRatio: true } });
    expect(resize.ok, JSON.stringify(resize)).toBe(true);
    if (resize.ok) {
      expect(resize.text).toMatch(/50\s*[×x]\s*34/);
      expect(resize.text).toMatch(/png/i);
      expect(new URL(resize.href, url).pathname).toMatch(/\/png\/Canon_40D\.png$/);
    }
    await expect.poll(() => preview.evaluate((img: any) => (img.complete ? img.naturalHeight : 0)), { timeout: 20_000 }).toBe(34);

    // The three conversions are on the account page, and in /me.
    const me = await api(url, '/api/v1/me', keyA, userA.pacer);
    expect(me.body.data.quota.daily_used).toBe(3);
    await page.goto(`${url}/account`);
    expect(quotaFromFacts(await accountFacts(page))).toEqual({ used: 3, max: 15, remaining: 12 });
    const recent = page.locator('section').filter({ has: page.getByRole('heading', { name: 'Recent conversions' }) });
    expect(await recent.getByRole('link', { name: /Canon_40D\.webp/ }).count()).toBeGreaterThan(0);
    expect(await recent.getByRole('link', { name: /Canon_40D\.png/ }).count()).toBeGreaterThan(0);

    // A thumbnail: the preview shows the part cover keeps (100x68 into 50x50 keeps 68x68, at the
    // right for east); a click keeps the part around that point; the result is the box.
    await page.goto(`${url}/convert`);
    await fillConverter(page, { file: SMALL_JPEG, operation: 'resize', format: 'webp', resize: { width: 50, height: 50, fit: 'cover', position: 'east' } });
    expect(await page.getByLabel('Keep aspect ratio').isDisabled()).toBe(true);
    const keptBox = page.locator('#crop-box');
    await expect.poll(() => keptBox.evaluate((box: any) => [box.hidden, box.style.left, box.style.width])).toEqual([false, '32%', '68%']);
    const shown = (await page.getByAltText('Preview of the chosen image').boundingBox())!;
    await page.mouse.click(shown.x + shown.width * 0.1, shown.y + shown.height / 2);
    expect(await page.getByLabel('Position', { exact: true }).inputValue()).toMatch(/^0\.\d+,0\.\d+$/);
    await expect.poll(() => keptBox.evaluate((box: any) => box.style.left)).toBe('0%');
    await page.getByLabel('Fit', { exact: true }).selectOption('contain');
    expect(await page.locator('#kept-hint').innerText()).toContain('padded');
    await page.getByLabel('Fit', { exact: true }).selectOption('cover');
    await page.getByLabel('Position', { exact: true }).selectOption('attention');
    const thumbnail = await convertInPage(page, userA.pacer, { file: SMALL_JPEG, operation: 'resize', format: 'webp', resize: { width: 50, height: 50, fit: 'cover', position: 'attention' } });
    expect(thumbnail.ok, JSON.stringify(thumbnail)).toBe(true);
    if (thumbnail.ok) expect(thumbnail.text).toMatch(/50\s*[×x]\s*50/);
  });

  it('chains crop, resize, rotate and flip in the page, sent as one request that spends one conversion', async () => {
    const page = await contextA.newPage();
    await page.goto(`${url}/convert`);
    const before = await api(url, '/api/v1/me', keyA, userA.pacer);
    await page.getByLabel(/^Image/).setInputFiles(SMALL_JPEG);
    await expect.poll(() => page.locator('#image-facts').innerText()).toContain('100 × 68 pixels');
    await page.getByLabel('Operation').selectOption('transform');
    await page.getByLabel('Format').selectOption('webp');
    const steps = page.locator('#steps > li');
    const sizes = page.locator('#steps-size');
    // Without steps the page says so instead of sending anything.
    await page.getByRole('button', { name: 'Apply steps', exact: true }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('Add a step first');

    // A crop starts as the whole picture; each step shows the size it leaves.
    await page.getByRole('button', { name: 'Add crop' }).click();
    const crop = steps.nth(0);
    expect(await Promise.all(['Left', 'Top', 'Width', 'Height'].map((label) => crop.getByLabel(label, { exact: true }).inputValue()))).toEqual(['0', '0', '100', '68']);
    await crop.getByLabel('Left', { exact: true }).fill('10');
    await crop.getByLabel('Top', { exact: true }).fill('4');
    await crop.getByLabel('Width', { exact: true }).fill('80');
    await crop.getByLabel('Height', { exact: true }).fill('60');
    await page.getByRole('button', { name: 'Add resize' }).click();
    await steps.nth(1).getByLabel('Width', { exact: true }).fill('40');
    await page.getByRole('button', { name: 'Add rotate' }).click();
    await page.getByRole('button', { name: 'Add flip' }).click();
    await steps.nth(3).getByLabel('Axis').selectOption('vertical');
    await page.getByRole('button', { name: 'Add flip' }).click();
    expect(await steps.count()).toBe(5);
    await page.getByRole('button', { name: 'Remove step 5 (flip)' }).click();
    expect(await steps.locator('.step-number').allInnerTexts()).toEqual(['1. Crop', '2. Resize', '3. Rotate', '4. Flip']);
    expect(await steps.locator('.step-size').allInnerTexts()).toEqual(['→ 80 × 60', '→ 40 × 30', '→ 30 × 40', '→ 30 × 40']);
    expect(await sizes.innerText()).toBe('The result will be 30 × 40 pixels.');

    const posts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') posts.push(new URL(request.url()).pathname);
    });
    // What the page hands the request: its steps field (Chromium does not show a file upload's body to the test).
    await page.evaluate(() => {
      const page = globalThis as any;
      const sent: unknown[] = (page.sentSteps = []);
      const send = page.XMLHttpRequest.prototype.send;
      page.XMLHttpRequest.prototype.send = function (body: any) {
        sent.push(body instanceof FormData ? body.get('steps') : null);
        return send.call(this, body);
      };
    });
    const outcome = await convertInPage(page, userA.pacer, { file: SMALL_JPEG, operation: 'transform', format: 'webp' });
    expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
    if (outcome.ok) expect(outcome.text).toMatch(/WEBP, 30\s*[×x]\s*40/);
    expect(posts).toEqual(['/app/v1/transform']);
    expect(await page.evaluate(() => (globalThis as any).sentSteps)).toEqual([
      '[{"op":"crop","x":10,"y":4,"width":80,"height":60},{"op":"resize","width":40,"fit":"inside"},{"op":"rotate","angle":90},{"op":"flip","axis":"vertical"}]',
    ]);
    const after = await api(url, '/api/v1/me', keyA, userA.pacer);
    expect(after.body.data.quota.daily_used).toBe(before.body.data.quota.daily_used + 1);
    await page.close();
  });

  it('chooses the quality itself with Auto and the smallest format with Best, and says what it measured', async () => {
    const page = await contextA.newPage();
    await page.goto(`${url}/convert`);
    // By role: a label's text keeps the space before its words, which getByLabel's pattern sees.
    const auto = page.getByRole('checkbox', { name: /^Auto/ });
    const quality = page.getByLabel('Quality');
    const target = page.getByLabel('Target score');
    expect([await auto.isChecked(), await quality.isDisabled(), await target.isDisabled()]).toEqual([false, false, true]);
    await auto.check();
    expect([await quality.isDisabled(), await target.isDisabled()]).toEqual([true, false]);
    await target.fill('75');
    const posts: (string | null)[][] = [];
    await page.exposeFunction('notePost', (fields: (string | null)[]) => posts.push(fields));
    await page.evaluate(() => {
      const page = globalThis as any;
      const send = page.XMLHttpRequest.prototype.send;
      page.XMLHttpRequest.prototype.send = function (body: any) {
        if (body instanceof FormData) page.notePost([body.get('format'), body.get('quality'), body.get('quality_target')]);
        return send.call(this, body);
      };
    });
    const chosen = await convertInPage(page, userA.pacer, { file: SMALL_JPEG, operation: 'convert', format: 'webp' });
    expect(chosen.ok, JSON.stringify(chosen)).toBe(true);
    if (chosen.ok) expect(chosen.text).toMatch(/WEBP, 100\s*[×x]\s*68 pixels, .*Quality \d+, chosen by Auto: SSIMULACRA 2 score [\d.]+ for a target of 75\./);

    // Best always chooses its quality: Auto is on and cannot be turned off.
    await page.getByLabel('Format').selectOption('best');
    expect([await auto.isChecked(), await auto.isDisabled(), await quality.isDisabled()]).toEqual([true, true, true]);
    await target.fill('');
    const best = await convertInPage(page, userA.pacer, { file: SMALL_JPEG, operation: 'convert', format: 'best' });
    expect(best.ok, JSON.stringify(best)).toBe(true);
    if (best.ok) expect(best.text).toMatch(/(WEBP|AVIF|JPG), 100\s*[×x]\s*68 pixels, .*chosen by Auto/);
    expect(posts).toEqual([
      ['webp', 'auto', '75'],
      ['best', null, null],
    ]);
    await page.close();
  });

  it("shows the API's own messages for an unsupported file, an oversized file and a bad crop, and failures spend no quota", async () => {
    const page = await contextA.newPage();
    await page.goto(`${url}/convert`);
    const before = await api(url, '/api/v1/me', keyA, userA.pacer);
    expect(before.status).toBe(200);

    const text = Buffer.from('This is a text file, not an image.\n'.repeat(20));
    const apiText = await api(url, '/api/v1/convert', keyA, userA.pacer, () => imageForm(text, 'notes.png', { format: 'webp' }));
    expect(apiText.status).toBe(422);
    expect(apiText.body.error.code).toBe('UNSUPPORTED_FORMAT');
    const unsupported = await convertInPage(page, userA.pacer, { file: { name: 'notes.png', mimeType: 'image/png', buffer: text }, operation: 'convert', format: 'webp' });
    expect(unsupported).toEqual({ ok: false, alert: expect.stringContaining(apiText.body.error.message) });
    expect(unsupported.ok || unsupported.alert).not.toMatch(/[{}]|"code"|UNSUPPORTED_FORMAT/);

    const big = Buffer.alloc(11 * 1024 * 1024, 7);
    Buffer.from('89504e470d0a1a0a', 'hex').copy(big);
    const apiBig = await api(url, '/api/v1/convert', keyA, userA.pacer, () => imageForm(big, 'big.png', { format: 'webp' }));
    expect(apiBig.status).toBe(422);
    expect(apiBig.body.error).toMatchObject({ code: 'FILE_TOO_LARGE', message: expect.stringContaining('larger than the 10 MB') });
    const tooLarge = await convertInPage(page, userA.pacer, { file: { name: 'big.png', mimeType: 'image/png', buffer: big }, operation: 'convert', format: 'webp' });
    expect(tooLarge).toEqual({ ok: false, alert: expect.stringContaining(apiBig.body.error.message) });
    // The page checks the size before uploading; with its limit raised the server's refusal shows the same way.
    let raised = false;
    await page.route(`${url}/convert`, async (route) => {
      const response = await route.fetch();
      const html = await response.text();
      raised = /data-max-bytes="\d+"/.test(html);
      await route.fulfill({ response, body: html.replace(/data-max-bytes="\d+"/, `data-max-bytes="${1024 ** 3}"`) });
    });
    await page.goto(`${url}/convert`);
    await page.unrouteAll();
    expect(raised, 'the converter form carries its size limit in data-max-bytes').toBe(true);
    const refused = page.waitForResponse((response) => response.request().method() === 'POST');
    const tooLargeOnServer = await convertInPage(page, userA.pacer, { file: { name: 'big.png', mimeType: 'image/png', buffer: big }, operation: 'convert', format: 'webp' });
    expect((await refused).status()).toBe(422);
    expect(tooLargeOnServer).toEqual({ ok: false, alert: expect.stringContaining(apiBig.body.error.message) });

    const region = { x: 90, y: 0, width: 40, height: 30 };
    const apiCrop = await api(url, '/api/v1/crop', keyA, userA.pacer, () => imageForm(smallJpegBytes(), 'Canon_40D.jpg', region));
    expect(apiCrop.status).toBe(422);
    const badCrop = await convertInPage(page, userA.pacer, { file: SMALL_JPEG, operation: 'crop', format: '', crop: region });
    expect(badCrop).toEqual({ ok: false, alert: expect.stringContaining(apiCrop.body.error.message) });

    const after = await api(url, '/api/v1/me', keyA, userA.pacer);
    expect(after.body.data.quota.daily_used).toBe(before.body.data.quota.daily_used);
    await page.goto(`${url}/account`);
    expect(quotaFromFacts(await accountFacts(page)).used).toBe(before.body.data.quota.daily_used);
    await page.close();
  });

  it('shares the Free daily quota between page and API: 15 succeed, the 16th is refused in both places', async () => {
    const pacer = new Pacer();
    const email = uniqueEmail('quota');
    const context = await newContext();
    const page = await context.newPage();
    await signUp(page, url, email);
    const key = await createKeyInPage(page, 'quota');
    await page.goto(`${url}/convert`);

    // Alternate: 8 conversions in the page, 7 through the API.
    let pageCount = 0;
    let apiCount = 0;
    for (let i = 1; i <= 15; i++) {
      if (i % 2 === 1) {
        const outcome = await convertInPage(page, pacer, { file: SMALL_JPEG, operation: 'convert', format: 'webp' });
        expect(outcome.ok, `conversion ${i} (page): ${JSON.stringify(outcome)}`).toBe(true);
        pageCount++;
      } else {
        const answer = await api(url, '/api/v1/convert', key, pacer, () => imageForm(smallJpegBytes(), 'Canon_40D.jpg', { format: 'png' }));
        expect(answer.status, `conversion ${i} (API): ${JSON.stringify(answer.body)}`).toBe(200);
        expect(answer.headers.get('x-ratelimit-remaining')).toBe(String(15 - i));
        apiCount++;
      }
    }
    expect([pageCount, apiCount]).toEqual([8, 7]);

    const refusedInPage = await convertInPage(page, pacer, { file: SMALL_JPEG, operation: 'convert', format: 'webp' });
    expect(refusedInPage.ok).toBe(false);
    if (!refusedInPage.ok) {
      expect(refusedInPage.alert).toContain(DAILY_LIMIT_MESSAGE);
      expect(refusedInPage.alert).not.toMatch(/[{}]|"code"|DAILY_LIMIT_REACHED/);
    }
    const refusedByApi = await api(url, '/api/v1/convert', key, pacer, () => imageForm(smallJpegBytes(), 'Canon_40D.jpg', { format: 'png' }));
    expect(refusedByApi.status).toBe(429);
    expect(refusedByApi.body.error.code).toBe('DAILY_LIMIT_REACHED');
    expect(refusedByApi.body.error.message).toContain(DAILY_LIMIT_MESSAGE);

    const me = await api(url, '/api/v1/me', key, pacer);
    expect(me.body.data.quota).toMatchObject({ daily_used: 15, daily_remaining: 0, daily_max: 15 });

    // Opened afresh, the converter says so at once, and refuses without uploading anything.
    await page.goto(`${url}/convert`);
    const exhausted = page.locator('#quota-exhausted');
    expect(await exhausted.isVisible()).toBe(true);
    expect(await exhausted.innerText()).toContain(DAILY_LIMIT_MESSAGE);
    const uploads: string[] = [];
    page.on('request', (request) => void (request.method() === 'POST' && uploads.push(request.url())));
    const refusedEarly = await convertInPage(page, pacer, { file: SMALL_JPEG, operation: 'convert', format: 'webp' });
    expect(refusedEarly).toEqual({ ok: false, alert: expect.stringContaining(DAILY_LIMIT_MESSAGE) });
    expect(uploads).toEqual([]);
    await page.goto(`${url}/account`);
    const facts = await accountFacts(page);
    expect(quotaFromFacts(facts)).toEqual({ used: 15, max: 15, remaining: 0 });
    expect(facts['Used today']).toMatch(/^15 of 15\b/);
  });

  it('refuses form posts without the CSRF token, ends sessions on log-out, and words log-in failures alike', async () => {
    const email = uniqueEmail('security');
    const context = await newContext();
    const page = await context.newPage();
    await signUp(page, url, email);
    const cookie = await sessionCookie(context);
    expect(cookie).toMatchObject({ name: 'session', httpOnly: true, sameSite: 'Lax', secure: false });
    const cookieHeader = `${cookie.name}=${cookie.value}`;
    const getAccount = () => fetch(`${url}/account`, { headers: { Cookie: cookieHeader }, redirect: 'manual' });

    // The key form's action and token, as the page has them.
    const form = page.locator('form').filter({ has: page.getByLabel('Key name') });
    const action = new URL((await form.getAttribute('action')) ?? '/account/keys', url).pathname;
    expect(action).toBe('/account/keys');
    const token = await form.locator('input[name=csrf_token]').inputValue();
    expect(token.length).toBeGreaterThanOrEqual(16);
    const post = (body: Record<string, string>) =>
      fetch(`${url}${action}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { Cookie: cookieHeader, Origin: url, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(body),
      });

    const withoutToken = await post({ name: 'csrf-missing' });
    expect(withoutToken.status).toBe(403);
    expect(withoutToken.headers.get('content-type')).toMatch(/text\/html/);
    await withoutToken.body?.cancel();
    const wrongToken = await post({ name: 'csrf-wrong', csrf_token: 'x'.repeat(token.length) });
    expect(wrongToken.status).toBe(403);
    await wrongToken.body?.cancel();
    // The control: the same post with the page's token goes through.
    const withToken = await post({ name: 'csrf-control', csrf_token: token });
    expect(withToken.status).toBeLessThan(400);
    await withToken.body?.cancel();

    await page.goto(`${url}/account`);
    expect(await keyRow(page, 'csrf-control').count()).toBe(1);
    expect(await keyRow(page, 'csrf-missing').count()).toBe(0);
    expect(await keyRow(page, 'csrf-wrong').count()).toBe(0);

    // Log out through the nav button; the old cookie is dead afterwards.
    const live = await getAccount();
    expect(live.status).toBe(200);
    await live.body?.cancel();
    await clickAndLoad(page, page.getByRole('navigation').getByRole('button', { name: 'Log out' }));
    expect(page.url()).toBe(`${url}/`);
    expect(await page.getByRole('navigation').getByRole('link', { name: 'Log in' }).count()).toBeGreaterThan(0);
    const dead = await getAccount();
    expect(dead.status).toBe(303);
    expect(dead.headers.get('location')).toMatch(/\/login\?next=(%2F|\/)account$/);
    await dead.body?.cancel();

    // Wrong password and unknown e-mail read the same.
    await page.goto(`${url}/login`);
    await submitLogin(page, email, 'not the password at all');
    const wrongPassword = (await page.getByRole('alert').innerText()).trim();
    expect(wrongPassword).toContain('Wrong e-mail or password.');
    expect(new URL(page.url()).pathname).not.toBe('/account');
    await page.goto(`${url}/login`);
    await submitLogin(page, uniqueEmail('nobody'), 'not the password at all');
    expect((await page.getByRole('alert').innerText()).trim()).toBe(wrongPassword);
    // And the right password still works.
    await page.goto(`${url}/login`);
    await submitLogin(page, email, PASSWORD);
    expect(new URL(page.url()).pathname).toBe('/account');
  });

  it('serves /docs: Swagger UI renders the API from assets on the Worker, nothing from another host', async () => {
    const context = await newContext();
    const page = await context.newPage();
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    await page.goto(`${url}/docs`);
    expect(await page.title()).toMatch(/^API reference\b/);
    await page.locator('.opblock').first().waitFor({ state: 'visible', timeout: 30_000 });
    const operations = await page.locator('.opblock-summary-path').allInnerTexts();
    for (const path of ['/api/v1/me', '/api/v1/convert', '/api/v1/crop', '/api/v1/resize', '/api/v1/remove-metadata', '/api/v1/transform']) {
      expect(operations.some((text) => text.includes(path)), path).toBe(true);
    }
    const foreign = requested.filter((address) => !['127.0.0.1', 'localhost'].includes(new URL(address).hostname) && !address.startsWith('data:'));
    expect(foreign).toEqual([]);
    expect(requested.some((address) => new URL(address).pathname.startsWith('/docs/assets/'))).toBe(true);
    expect(requested.some((address) => new URL(address).pathname === '/api/v1/openapi.json')).toBe(true);

    // "Try it out" starts from the documented examples and defaults, and the call works as it stands.
    await page.locator('.opblock-summary').filter({ hasText: '/api/v1/resize' }).first().click();
    const resize = page.locator('.opblock.is-open').filter({ hasText: '/api/v1/resize' });
    await resize.getByRole('button', { name: 'Try it out' }).click();
    const property = (name: string) => resize.locator(`tr[data-property-name="${name}"]`).locator('input[type=text], select').first();
    expect({
      width: await property('width').inputValue(),
      height: await property('height').inputValue(),
      quality: await property('quality').inputValue(),
      format: await property('format').inputValue(),
    }).toEqual({ width: '800', height: '600', quality: '80', format: '' });
    await page.locator('.auth-wrapper').getByRole('button', { name: /Authorize/ }).click();
    await page.locator('.modal-ux input').first().fill(keyA);
    await page.locator('.modal-ux .auth-btn-wrapper button.authorize').click();
    await page.locator('.modal-ux .auth-btn-wrapper button.btn-done').click();
    await resize.locator('tr[data-property-name="file"] input[type=file]').setInputFiles(SMALL_JPEG);
    await userA.pacer.turn();
    await resize.getByRole('button', { name: 'Execute' }).click();
    const answer = resize.locator('.live-responses-table .response');
    await answer.first().waitFor({ state: 'visible', timeout: 60_000 });
    expect((await answer.locator('.response-col_status').first().innerText()).trim()).toBe('200');
    const body = JSON.parse(await answer.locator('.response-col_description pre').first().innerText());
    // 100x68 fitted into the example's 800x600 box, in the input's format.
    expect(body).toMatchObject({ success: true, data: { width: 800, height: 544, format: 'jpg', filename: 'Canon_40D.jpg' } });

    // Transform's steps start as the documented example (JSON text), which runs as it stands.
    await page.locator('.opblock-summary').filter({ hasText: '/api/v1/transform' }).first().click();
    const transform = page.locator('.opblock.is-open').filter({ hasText: '/api/v1/transform' });
    await transform.getByRole('button', { name: 'Try it out' }).click();
    const steps = transform.locator('tr[data-property-name="steps"]').locator('input[type=text], textarea').first();
    expect(JSON.parse(await steps.inputValue())).toEqual([
      { op: 'crop', x: 0, y: 0, width: 80, height: 60 },
      { op: 'resize', width: 40 },
      { op: 'rotate', angle: 90 },
    ]);
    await transform.locator('tr[data-property-name="file"] input[type=file]').setInputFiles(SMALL_JPEG);
    await userA.pacer.turn();
    await transform.getByRole('button', { name: 'Execute' }).click();
    const transformed = transform.locator('.live-responses-table .response');
    await transformed.first().waitFor({ state: 'visible', timeout: 60_000 });
    expect((await transformed.locator('.response-col_status').first().innerText()).trim()).toBe('200');
    expect(JSON.parse(await transformed.locator('.response-col_description pre').first().innerText())).toMatchObject({ success: true, data: { width: 30, height: 40, format: 'jpg' } });
  });

  /** Per page and viewport: how many CSS pixels wider than the viewport the page is. */
  const overflow: Record<string, Record<string, number>> = {};
  /** Per page: form fields in <main> with no label (none of <label>, aria-label, aria-labelledby). */
  const unlabelled: Record<string, string[]> = {};
  const UNLABELLED_FIELDS = `[...document.querySelectorAll('main input:not([type=hidden]), main select, main textarea')]
    .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
    .map((el) => el.name || el.outerHTML.slice(0, 80))`;

  it('takes screenshots of every page at desktop and phone width', async () => {
    const loggedIn = await contextA.storageState();
    overflow.home = await screenshot(browser, 'home', undefined, async (page) => {
      watchPage(page);
      await page.goto(`${url}/`);
      unlabelled.home = (await page.evaluate(UNLABELLED_FIELDS)) as string[];
    });
    overflow.signup = await screenshot(browser, 'signup', undefined, async (page) => {
      watchPage(page);
      await page.goto(`${url}/signup`);
      await page.locator('details summary').first().click(); // show the operator-account field too
      unlabelled.signup = (await page.evaluate(UNLABELLED_FIELDS)) as string[];
    });
    overflow.login = await screenshot(browser, 'login', undefined, async (page) => {
      watchPage(page);
      await page.goto(`${url}/login`);
      await submitLogin(page, userA.email, 'not the password at all'); // with the error shown
      unlabelled.login = (await page.evaluate(UNLABELLED_FIELDS)) as string[];
    });
    overflow.account = await screenshot(browser, 'account', loggedIn, async (page, viewport) => {
      watchPage(page);
      await page.goto(`${url}/account`);
      await createKeyInPage(page, `screenshot ${viewport}`);
      unlabelled.account = (await page.evaluate(UNLABELLED_FIELDS)) as string[];
    });
    overflow.convert = await screenshot(browser, 'convert', loggedIn, async (page) => {
      watchPage(page);
      await page.goto(`${url}/convert`);
      const outcome = await convertInPage(page, userA.pacer, { file: SMALL_JPEG, operation: 'convert', format: 'webp' });
      expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
      const preview = page.getByAltText('Preview of the result');
      await expect.poll(() => preview.evaluate((img: any) => (img.complete ? img.naturalWidth : 0)), { timeout: 20_000 }).toBeGreaterThan(0);
      unlabelled.convert = (await page.evaluate(UNLABELLED_FIELDS)) as string[];
    });
    overflow.docs = await screenshot(browser, 'docs', undefined, async (page) => {
      watchPage(page);
      await page.goto(`${url}/docs`);
      await page.locator('.opblock').first().waitFor({ state: 'visible', timeout: 30_000 });
      // One operation opened, to show its parameters and buttons too.
      await page.locator('.opblock-summary').filter({ hasText: '/api/v1/convert' }).first().click();
      await page.locator('.opblock.is-open').first().waitFor({ state: 'visible' });
    });
    expect(Object.keys(overflow)).toEqual(['home', 'signup', 'login', 'account', 'convert', 'docs']);
  });

  it('labels every form field of the pages', () => {
    expect(unlabelled).toEqual({ home: [], signup: [], login: [], account: [], convert: [] });
  });

  it('has no page that scrolls sideways at desktop or phone width', () => {
    expect(Object.keys(overflow).length).toBe(6);
    expect(overflow).toEqual(Object.fromEntries(Object.keys(overflow).map((name) => [name, { desktop: 0, phone: 0 }])));
  });

  it('had no script errors and no broken scripts, styles, images or fonts on any page', () => {
    expect(pageProblems).toEqual([]);
  });
});
