/**
 * The sign-in paths of the browser app not taken by the contribution test, in headless Chromium
 * against a real coordinator (embedded verifier; nobody contributes here):
 * GitHub through the real OAuth redirects (a local GitHub emulator) back to the contributor page,
 * signed in, or with the refusal explained when the account is below the minimums;
 * a Semaphore identity created in the browser, kept across a reload, and refused in plain words
 * while its commitment is not in the group; the console refusing a wrong token and a
 * non-coordinator account. Screenshots: test-artifacts/browser/sign-in-*.png.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Identity } from '@semaphore-protocol/identity';
import type { Browser, Page } from 'playwright-core';
import { startGithubEmulator, type GithubEmulator } from '../helpers/github-emulator.ts';
import { echoPageErrors, launchChromium, screenshot, builtWebApp } from '../helpers/chromium.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { plainWords } from '../../web/src/api/error-messages.ts';

let github: GithubEmulator;
let coordinator: TestCoordinator;
let browser: Browser;

async function newPage(label: string): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
  echoPageErrors(page, label);
  return page;
}

before(async () => {
  github = await startGithubEmulator();
  coordinator = await startTestCoordinator({
    env: {
      COORDINATOR_TOKEN: 'coordinator-token-for-browser-tests',
      GITHUB_CLIENT_ID: github.clientId,
      GITHUB_CLIENT_SECRET: github.clientSecret,
      GITHUB_AUTHORIZATION_URL: github.authorizationUrl,
      GITHUB_TOKEN_URL: github.tokenUrl,
      GITHUB_USER_PROFILE_URL: github.userProfileUrl,
      // A path: resolved against the request's host, which is only known once listening.
      GITHUB_CALLBACK_URL: '/auth/github/callback',
      SEMAPHORE_GROUP_MEMBERS: new Identity().commitment.toString(),
    },
    webDir: builtWebApp(),
  });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await coordinator?.close();
  await github?.close();
});

describe('sign-in methods in the browser', { timeout: 120_000 }, () => {
  test('GitHub: the OAuth redirects lead back to the contributor page, signed in with the login', async () => {
    github.setProfile({
      id: 4242,
      login: 'octo-contributor',
      followers: 10,
      following: 10,
      public_repos: 5,
      created_at: '2015-01-01T00:00:00Z',
    });
    const page = await newPage('github');
    await page.goto(`${coordinator.url}/`);
    await page.click('#github-sign-in');
    await page.waitForSelector('#join');
    assert.equal(new URL(page.url()).pathname, '/');
    assert.equal(await page.textContent('#signed-in-as'), 'octo-contributor');
    assert.match((await page.textContent('#account'))!, /\(GitHub\)/);
    await screenshot(page, 'sign-in-github-signed-in');

    // The same account is no coordinator: the console says so in plain words.
    await page.goto(`${coordinator.url}/console/`);
    const notice = await page.waitForSelector('[data-error-code="auth.not_coordinator"]');
    assert.ok((await notice.textContent())!.includes(plainWords('auth.not_coordinator').what));
  });

  test('GitHub: an account below the minimums lands back on the page with the refusal in plain words', async () => {
    github.setProfile({
      id: 4343,
      login: 'brand-new',
      followers: 0,
      following: 0,
      public_repos: 0,
      created_at: new Date().toISOString(),
    });
    const page = await newPage('github-refused');
    await page.goto(`${coordinator.url}/`);
    await page.click('#github-sign-in');
    const notice = await page.waitForSelector('#sign-in [data-error-code="auth.below_minimum"]');
    assert.ok((await notice.textContent())!.includes(plainWords('auth.below_minimum').what));
    assert.equal(new URL(page.url()).search, '', 'the code is taken out of the address');
    assert.equal(await page.$('#join'), null, 'not signed in');
    await screenshot(page, 'sign-in-github-below-minimums');
  });

  test(
    'Semaphore: an identity created in the browser is kept across a ' +
      'reload; outside the group, sign-in is refused in plain words',
    async () => {
      const page = await newPage('semaphore');
      await page.goto(`${coordinator.url}/`);
      await page.click('#semaphore-create');
      const commitment = (await (await page.waitForSelector('#semaphore-commitment')).textContent())!;
      assert.match(commitment, /^[0-9]+$/);
      await page.reload();
      assert.equal(
        await (await page.waitForSelector('#semaphore-commitment')).textContent(),
        commitment,
        'the identity stays in this browser',
      );
      await page.click('#semaphore-sign-in-stored');
      const notice = await page.waitForSelector('#sign-in [data-error-code="auth.unknown_root"]');
      assert.ok((await notice.textContent())!.includes(plainWords('auth.unknown_root').next));
      assert.equal(await page.$('#join'), null, 'not signed in');
      await screenshot(page, 'sign-in-semaphore-not-in-group');
    },
  );

  test('console: a wrong token is refused in plain words', async () => {
    const page = await newPage('console');
    await page.goto(`${coordinator.url}/console/`);
    await page.fill('#coordinator-token', 'not-the-token-at-all');
    await page.click('#coordinator-sign-in button[type=submit]');
    await page.waitForSelector('#sign-in [data-error-code="auth.not_coordinator"]');
    assert.equal(await page.$('#console-phase'), null);
    await screenshot(page, 'sign-in-console-wrong-token');
  });
});
