/**
 * Debian's Chromium driven by playwright-core, for the browser tests: headless, sandbox off (CI
 * runs as root in a container), no background network or component updates (there is no
 * internet). CHROMIUM_BIN overrides the binary. Screenshots go to test-artifacts/ (git-ignored).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { startTestCoordinator, type TestCoordinator, type TestCoordinatorOptions } from './test-coordinator.ts';

export const CHROMIUM_BIN = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_BIN, args: CHROMIUM_ARGS });
}

/** The built browser app, as a coordinator serves it (its `webDir`). */
const WEB_DIR = path.join(REPO_ROOT, 'web', 'dist');

/** Fails with what to run when the browser app is not built; returns WEB_DIR. */
export function builtWebApp(): string {
  const built = existsSync(path.join(WEB_DIR, 'index.html'));
  assert.ok(built, `no built web app in ${WEB_DIR}: run \`npm run build:web\` (npm test does it)`);
  return WEB_DIR;
}

/**
 * Chromium for a test file, with pages opened as a person opens them: `newPage(label)` gives each
 * page its own context (its own cookies: a contributor, the coordinator) at 1100×900, echoes its
 * errors to stderr under `label` (echoPageErrors) and accepts its dialogs (confirmations, the
 * beforeunload warning) as a person would. Add the test's own listeners to the page it returns.
 * `close()` closes every context, then the browser (startWebApp's `close()` calls it).
 */
export interface TestBrowser {
  browser: Browser;
  newPage(label: string): Promise<Page>;
  close(): Promise<void>;
}

async function startTestBrowser(): Promise<TestBrowser> {
  const browser = await launchChromium();
  const contexts: BrowserContext[] = [];
  return {
    browser,
    async newPage(label) {
      const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
      contexts.push(context);
      const page = await context.newPage();
      echoPageErrors(page, label);
      page.on('dialog', (dialog) => void dialog.accept().catch(() => {}));
      return page;
    },
    async close() {
      for (const context of contexts.splice(0)) await context.close().catch(() => {});
      await browser.close();
    },
  };
}

/** A coordinator serving the built browser app, and Chromium to open it in. */
export interface WebAppUnderTest {
  coordinator: TestCoordinator;
  browser: TestBrowser;
  /** Closes the browser, then the coordinator. */
  close(): Promise<void>;
}

/**
 * Starts a test coordinator serving the built web app (builtWebApp), its lobby ticking every 100 ms
 * (`options` add to or override startTestCoordinator's), then a TestBrowser.
 */
export async function startWebApp(options: TestCoordinatorOptions): Promise<WebAppUnderTest> {
  const coordinator = await startTestCoordinator({ tickIntervalMs: 100, webDir: builtWebApp(), ...options });
  const browser = await startTestBrowser().catch(async (error: unknown) => {
    await coordinator.close();
    throw error;
  });
  return {
    coordinator,
    browser,
    async close() {
      await browser.close();
      await coordinator.close();
    },
  };
}

const ARTIFACTS_DIR = path.join(REPO_ROOT, 'test-artifacts', 'browser');

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
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      process.stderr.write(`[${label} console] ${message.text()}\n`);
  });
}

/**
 * Records every status (and queue position, as waiting@N) each row of the contribute page's
 * #circuits table goes through, by a test-side observer installed in every document of the page,
 * so it survives reloads; read it with statusesSeen(page). With `computingDetails`, also what the
 * computing step says (which engine, how many workers), once per distinct text, in
 * `window.computingDetails`.
 */
export async function recordStatuses(page: Page, options: { computingDetails?: boolean } = {}): Promise<void> {
  await page.addInitScript((withDetails) => {
    const seen: Record<string, string[]> = {};
    (window as unknown as { statusesSeen: typeof seen }).statusesSeen = seen;
    new MutationObserver(() => {
      for (const row of document.querySelectorAll('#circuits tr[data-circuit]')) {
        const list = (seen[row.getAttribute('data-circuit')!] ??= []);
        const position = row.getAttribute('data-position');
        const status = `${row.getAttribute('data-status')}${position ? `@${position}` : ''}`;
        if (list.at(-1) !== status) list.push(status);
        if (!withDetails) continue;
        const detail = row.querySelector('.detail')?.textContent ?? '';
        const details = ((window as unknown as { computingDetails?: string[] }).computingDetails ??= []);
        // The engine as the step names it: snarkjs's section progress, or a streamed turn's step.
        const step = status === 'contributing' ? detail.split('. ')[0]! : detail;
        const named =
          (status === 'computing' && detail.includes('section')) ||
          (status === 'contributing' && /kernel|snarkjs/.test(step));
        if (named && !details.includes(step)) details.push(step);
      }
    }).observe(document, { subtree: true, childList: true, attributes: true });
  }, options.computingDetails ?? false);
}

/** What recordStatuses(page) has seen so far: circuit → the statuses its row went through, in order. */
export function statusesSeen(page: Page): Promise<Record<string, string[]>> {
  return page.evaluate(() => (window as unknown as { statusesSeen: Record<string, string[]> }).statusesSeen);
}
