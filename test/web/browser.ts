/**
 * Chromium for the console tests: Debian's `chromium` through playwright-core, headless, on a real
 * `svc serve` over HTTPS at https://localhost (WebAuthn needs that origin). Every request the page
 * makes is recorded; one to another origin is aborted and fails the run.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { REPO_ROOT, type TestServer } from '../helpers/server.js';

export const CHROMIUM = '/usr/bin/chromium';
export const skipReason = existsSync(CHROMIUM)
  ? false
  : `chromium is not installed at ${CHROMIUM} (apt-get install -y --no-install-recommends chromium fonts-liberation)`;
export const SHOTS = path.join(REPO_ROOT, 'test-results', 'web');
export const ADMIN = { email: 'admin@demo.local', password: 'demo-password-1234' };

export async function launch(server: TestServer): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      `--ignore-certificate-errors-spki-list=${server.pinSha256}`,
    ],
  });
}

export interface GuardedContext {
  context: BrowserContext;
  origin: string;
  /** every URL requested, and those that left the origin */
  requests: string[];
  foreign: string[];
}

/** A context whose requests must all stay on the server's origin. */
export async function guardedContext(browser: Browser, server: TestServer): Promise<GuardedContext> {
  const origin = `https://localhost:${server.port}`;
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1366, height: 900 }, acceptDownloads: true });
  const requests: string[] = [];
  const foreign: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    requests.push(url);
    if (new URL(url).origin !== origin) {
      foreign.push(url);
      return route.abort('blockedbyclient');
    }
    return route.continue();
  });
  return { context, origin, requests, foreign };
}

export function assertSameOrigin(g: GuardedContext): void {
  assert.ok(g.requests.length > 0, 'the guard saw the requests');
  assert.deepEqual(g.foreign, [], 'no request leaves the origin');
}

/** Sign in through the form; resolves on the overview. */
export async function signIn(page: Page, origin: string, who: { email: string; password: string } = ADMIN): Promise<void> {
  await page.goto(`${origin}/overview`);
  await page.fill('#f-email', who.email);
  await page.fill('#f-password', who.password);
  await page.click('button[type=submit]');
  await page.waitForSelector('[data-ready]', { timeout: 30_000 });
}

/** axe-core on the page as it is: no serious or critical violation. */
export async function assertAccessible(page: Page, name: string): Promise<void> {
  const { AxeBuilder } = await import('@axe-core/playwright');
  const result = await new AxeBuilder({ page: page as never }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(' | ')}`),
    [],
    `${name}: accessibility`,
  );
}

export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: false });
}
