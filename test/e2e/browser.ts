/// <reference types="node" />
/**
 * Headless Chromium for the end-to-end tests of the web pages (playwright-core, no bundled browser):
 * Debian's `chromium` package, or whatever CHROMIUM_PATH names.
 *
 *   if (BROWSER_SKIP) ... // no Chromium and not CI: the suite is skipped, with a warning
 *   const browser = await launchBrowser();          // throws CHROMIUM_MISSING under CI=true
 *   await screenshot(browser, 'home', state, async (page) => { await page.goto(url); });
 *
 * Without Chromium the tests are skipped with a clear warning on a developer machine, and fail
 * under CI=true: a CI run must never pass without having driven a browser.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { PROJECT_ROOT } from '../../src/cli/d1.ts';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_MISSING =
  `Chromium was not found at ${CHROMIUM_PATH}, so the browser tests (test/e2e) cannot run. ` +
  'Install it with "sudo apt-get install -y chromium" (Debian/Ubuntu), or set CHROMIUM_PATH to a Chromium or Chrome executable.';

const chromiumPresent = existsSync(CHROMIUM_PATH);
const onCi = process.env.CI === 'true';

/** True when the browser tests are to be skipped: no Chromium, and not on CI (where that is a failure). */
export const BROWSER_SKIP = !chromiumPresent && !onCi;

if (BROWSER_SKIP) {
  console.warn(`\n${'*'.repeat(100)}\n* SKIPPING the browser tests: ${CHROMIUM_MISSING}\n${'*'.repeat(100)}\n`);
}

/** Fails (with how to install Chromium) when it is missing; call it first in beforeAll. */
export function assertChromium(): void {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(CHROMIUM_MISSING);
}

export async function launchBrowser(): Promise<Browser> {
  assertChromium();
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}

export type Viewport = 'desktop' | 'phone';

export const VIEWPORTS: Record<Viewport, BrowserContextOptions> = {
  desktop: { viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 },
  phone: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true },
};

export const SCREENSHOT_DIR = path.join(PROJECT_ROOT, 'test-output', 'screenshots');

export type StorageState = Awaited<ReturnType<BrowserContext['storageState']>>;

/**
 * Full-page screenshots of one page at desktop and phone size, each in a fresh context
 * (cookies from `state`, e.g. a logged-in session): test-output/screenshots/<name>-<viewport>.png.
 * `prepare` opens the page and puts it into the state to capture; it gets the viewport's name.
 * Returns, per viewport, the horizontal overflow in CSS pixels: how much wider the page is than the viewport.
 */
export async function screenshot(
  browser: Browser,
  name: string,
  state: StorageState | undefined,
  prepare: (page: Page, viewport: Viewport) => Promise<void>,
): Promise<Record<Viewport, number>> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const overflow = {} as Record<Viewport, number>;
  for (const viewport of Object.keys(VIEWPORTS) as Viewport[]) {
    const context = await browser.newContext({ ...VIEWPORTS[viewport], storageState: state });
    try {
      const page = await context.newPage();
      await prepare(page, viewport);
      // Against the configured width: on a phone the layout viewport grows to fit wide content.
      const width = VIEWPORTS[viewport].viewport!.width;
      overflow[viewport] = Math.max(0, ((await page.evaluate('document.documentElement.scrollWidth')) as number) - width);
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-${viewport}.png`), fullPage: true });
    } finally {
      await context.close();
    }
  }
  return overflow;
}
