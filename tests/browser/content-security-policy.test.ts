/**
 * The browser app under the coordinator's Content-Security-Policy, in headless Chromium: an
 * anonymous contributor signs in with a pasted Semaphore identity (the proof is made in the page:
 * WebAssembly and ffjavascript's blob: workers), joins, and the page contributes to the first
 * circuit by itself (snarkjs in the module Web Worker, tus upload) until it is accepted; then the
 * coordinator removes the contributor's entry from the console's queue table, and the page says
 * why. Not one CSP violation may be reported (securitypolicyviolation events in every document,
 * and Chromium's console), and every page must have been served with the policy.
 *
 * Needs web/dist (`npm test` builds it) and Chromium at /usr/bin/chromium (CHROMIUM_BIN overrides).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Identity } from '@semaphore-protocol/identity';
import type { Page } from 'playwright-core';
import { screenshot, startWebApp, type WebAppUnderTest } from '../helpers/chromium.ts';

const COORDINATOR_TOKEN = 'coordinator-token-for-csp-test';
const identity = new Identity();
let app: WebAppUnderTest;
/** Every CSP complaint seen, from any page: `label: what`. */
const violations: string[] = [];
/** Documents served without the policy. */
const unprotected: string[] = [];

async function newPage(label: string): Promise<Page> {
  const page = await app.browser.newPage(label);
  page.on('console', (message) => {
    if (
      /Content.Security.Policy|Refused to (load|execute|compile|create|connect|apply|evaluate|frame)/i.test(
        message.text(),
      )
    )
      violations.push(`${label} console: ${message.text()}`);
  });
  page.on('response', (response) => {
    if (response.request().resourceType() === 'document' && !response.headers()['content-security-policy'])
      unprotected.push(response.url());
  });
  await page.exposeFunction('reportCspViolation', (what: string) => violations.push(`${label} event: ${what}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      void (window as unknown as { reportCspViolation(what: string): Promise<void> }).reportCspViolation(
        `${event.violatedDirective} blocked ${event.blockedURI} (${event.sourceFile}:${event.lineNumber})`,
      );
    });
  });
  return page;
}

const row = (circuit: string) => `#circuits tr[data-circuit="${circuit}"]`;

before(async () => {
  app = await startWebApp({ env: { COORDINATOR_TOKEN, SEMAPHORE_GROUP_MEMBERS: identity.commitment.toString() } });
});

after(() => app?.close());

test(
  'sign-in with a Semaphore proof, a contribution and the console run under the CSP without a violation',
  { timeout: 240_000 },
  async () => {
    const contributor = await newPage('contributor');
    await contributor.goto(`${app.coordinator.url}/`);
    await contributor.click('#semaphore-sign-in summary');
    await contributor.fill('#semaphore-import', identity.export());
    await contributor.click('#semaphore-sign-in-pasted');
    await contributor.waitForSelector('#join', { timeout: 60_000 });
    await contributor.click('#join');
    await contributor.waitForSelector(`${row('register')}[data-status="accepted"]`, { timeout: 150_000 });
    await screenshot(contributor, 'csp-01-register-accepted');

    const consolePage = await newPage('console');
    await consolePage.goto(`${app.coordinator.url}/console/`);
    await consolePage.fill('#coordinator-token', COORDINATOR_TOKEN);
    await consolePage.click('#coordinator-sign-in button[type=submit]');
    const remove = '#console-queue button[data-remove^="semaphore:"]';
    await consolePage.waitForSelector(remove, { timeout: 30_000 });
    await screenshot(consolePage, 'csp-02-console-queue');
    // The page contributes to each circuit by itself, so the entry shown may be a turn whose upload
    // lands before the click: a contribution being verified cannot be removed (lobby.not_queued),
    // and the console says so. Then the next circuit's turn is removed instead.
    const removed = '#removal-notice [data-reason="coordinator"]';
    for (let attempt = 1; ; attempt++) {
      // A notice of the previous attempt must not answer for this one.
      await consolePage.evaluate(() =>
        document.querySelectorAll('[data-error-code]').forEach((notice) => notice.remove()),
      );
      await consolePage.click(remove);
      const outcome = await Promise.race([
        contributor.waitForSelector(removed, { timeout: 30_000 }).then(() => 'removed' as const),
        consolePage
          .waitForSelector('[data-error-code="lobby.not_queued"]', { timeout: 30_000 })
          .then(() => 'being verified' as const),
      ]);
      if (outcome === 'removed') break;
      assert.ok(attempt < 5, 'the contributor was never removed: each click found a contribution being verified');
      await consolePage.waitForSelector(`${remove}:not([disabled])`, { timeout: 60_000 });
    }
    assert.match((await contributor.textContent('#removal-notice'))!, /coordinator removed your entry/);
    assert.equal(await contributor.isVisible('#join'), true, 'the contributor may join again');
    await screenshot(contributor, 'csp-03-removed-by-coordinator');

    const served = await fetch(`${app.coordinator.url}/`);
    assert.match(served.headers.get('content-security-policy') ?? '', /script-src 'self' 'wasm-unsafe-eval'/);
    assert.deepEqual(unprotected, [], 'every document carries the policy');
    // One round trip per page, so a report still on its way through exposeFunction has arrived.
    await contributor.evaluate(() => 0);
    await consolePage.evaluate(() => 0);
    assert.deepEqual(violations, []);
  },
);

// The control for the test above: its "no violation" holds only if a violation would be seen.
test('the violation detector itself: an inline script injected into the app is blocked and reported', async () => {
  const page = await newPage('control');
  await page.goto(`${app.coordinator.url}/`);
  violations.length = 0;
  await page.evaluate(() => {
    const script = document.createElement('script');
    script.textContent = 'window.inlineScriptRan = true';
    document.head.append(script);
  });
  const deadline = Date.now() + 10_000;
  while (violations.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(
    violations.some((v) => /script-src/.test(v)),
    `the injected inline script was reported: ${JSON.stringify(violations)}`,
  );
  assert.equal(
    await page.evaluate(() => (window as unknown as { inlineScriptRan?: boolean }).inlineScriptRan),
    undefined,
    'the inline script did not run',
  );
});
