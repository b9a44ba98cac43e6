/**
 * Debian's Chromium driven by playwright-core, for the browser tests: headless, sandbox off (CI
 * runs as root in a container), no background network or component updates (there is no
 * internet). CHROMIUM_BIN overrides the binary. Screenshots go to test-artifacts/ (git-ignored).
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';

export const CHROMIUM_BIN = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_BIN, args: CHROMIUM_ARGS });
}

export const ARTIFACTS_DIR = path.join(REPO_ROOT, 'test-artifacts', 'browser');

/** Saves a full-page screenshot as test-artifacts/browser/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  const file = path.join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * Forwards the page's console errors and uncaught exceptions to the test's stderr (prefixed).
 * Chromium's "Failed to load resource" lines are left out: the app handles refusals (4xx) itself.
 */
export function echoPageErrors(page: Page, label: string): void {
  page.on('pageerror', (error) => process.stderr.write(`[${label} pageerror] ${error.message}\n`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) process.stderr.write(`[${label} console] ${message.text()}\n`);
  });
}
