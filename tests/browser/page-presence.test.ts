/**
 * The page holds the presence stream: in headless Chromium against a real coordinator serving the
 * built app (ceremony paused, so nobody computes), a contributor who joined and then closes the tab
 * is passed over within DISCONNECT_GRACE_MS of the close, long before PRESENCE_MS (an hour here),
 * which only the stream's close can tell the coordinator; one who only reloads the page is not.
 * In line, the page says so: the presence notice, the tab's title, and the signed join among the
 * receipts so far, which it downloads.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { startWebApp, type WebAppUnderTest } from '../helpers/chromium.ts';

// Long enough for a reload to re-open the stream while another browser test shares the cores
// (scripts/run-tests.js runs two at a time).
const GRACE = 2500;
let app: WebAppUnderTest;

before(async () => {
  app = await startWebApp({ env: { PRESENCE_MS: String(3_600_000), DISCONNECT_GRACE_MS: String(GRACE) } });
  app.coordinator.phase.set('paused', Date.now());
});

after(() => app?.close());

async function joined(name: string): Promise<Page> {
  const page = await app.browser.newPage(name);
  await page.goto(`${app.coordinator.url}/`);
  await page.fill('#demo-name', name);
  await page.click('#demo-sign-in button[type=submit]');
  await page.waitForSelector('#join');
  await page.click('#join');
  await page.waitForSelector('#circuits tr[data-circuit="register"][data-status="waiting"]');
  return page;
}

/** Whether the coordinator's lobby lists `name`'s waiting entry as away. */
function isAway(name: string): boolean {
  return app.coordinator.lobby.queueEntries().some((e) => e.contributorId === `demo:${name}` && e.away === true);
}

async function awayWithin(name: string, ms: number): Promise<boolean> {
  for (const started = Date.now(); Date.now() - started < ms; await new Promise((r) => setTimeout(r, 100)))
    if (isAway(name)) return true;
  return isAway(name);
}

let leaving: Page;
let reloading: Page;

test('in line, the page names the place in its tab, asks to keep it open and has the signed join', async () => {
  leaving = await joined('leaving');
  reloading = await joined('reloading');
  await reloading.waitForSelector('#circuits tr[data-circuit="register"][data-position="2"]');
  assert.match(
    (await reloading.textContent('#presence-notice'))!,
    /^You are in line; keep this page open: .* passed over/,
  );
  assert.match(await reloading.title(), /^#2 in line · Contribute · /, 'the tab says where the contributor stands');
  // In line, before any acceptance, the page's receipts already hold the signed join.
  const [download] = await Promise.all([
    reloading.waitForEvent('download'),
    reloading.click('#download-receipts-so-far'),
  ]);
  const soFar = JSON.parse(await readFile((await download.path())!, 'utf8')) as {
    receipts: unknown[];
    steps: Array<{ body: string }>;
  };
  assert.equal(soFar.receipts.length, 0, 'no acceptance yet');
  assert.ok(
    soFar.steps.some((step) => {
      const body = JSON.parse(step.body) as { step?: string; circuit?: string; position?: number };
      return body.step === 'join' && body.circuit === 'register' && body.position === 2;
    }),
    `a join receipt among ${soFar.steps.map((step) => step.body).join(', ')}`,
  );
});

test('a closed tab is passed over once the grace has passed; a reloaded one is not', async () => {
  assert.equal(isAway('leaving'), false, 'joined and the page open: present');
  const closedAt = Date.now();
  await leaving.close();
  assert.equal(await awayWithin('leaving', 15_000), true, 'the closed tab is passed over');
  const took = Date.now() - closedAt;
  assert.ok(took >= GRACE && took < 15_000, `away ${took} ms after the close, not after PRESENCE_MS (1 h)`);
  await reloading.reload();
  await reloading.waitForSelector('#circuits tr[data-circuit="register"][data-status="waiting"]');
  assert.equal(await awayWithin('reloading', 3 * GRACE), false, 'a reload re-opens the stream within the grace');
});
