/**
 * What the public page tells an auditor to run (web/src/pages/ceremony-page.ts, read from the page
 * in Chromium) is `ceremony fetch` and `ceremony audit` from their own checkout, no script of the
 * page's; and `ceremony fetch` lays a finalised ceremony out as `ceremony publish` does: every file it
 * fetches is in the publication at the same path with the same bytes; the publication adds only
 * SHA256SUMS and the circom sources (which the fetch's user has in the checkout).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { copyCeremony, finalisedCeremony, REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { echoPageErrors, launchChromium, builtWebApp } from '../helpers/chromium.ts';
import { publishCeremony } from '../../core/publish/publish-ceremony.ts';
import type { RunningCoordinator } from '../../server/start-coordinator.ts';
import { listFiles } from '../helpers/list-files.ts';
import { runCli } from '../helpers/run-cli.ts';
import { startTestCoordinator } from '../helpers/test-coordinator.ts';
import { cleanUp } from '../helpers/clean-up.ts';

let dataDir: string;
let work: string;
let coordinator: RunningCoordinator;
let browser: Browser;

const sha256 = async (file: string): Promise<string> =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex');

before(async () => {
  dataDir = await copyCeremony((await finalisedCeremony()).dataDir);
  work = await mkdtemp(path.join(tmpdir(), 'publish-layout-'));
  // The coordinator adds its private state/ (SQLite, receipt key) to the folder it serves.
  coordinator = await startTestCoordinator({ dataDir, open: false, webDir: builtWebApp() });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await coordinator?.close();
  await cleanUp(dataDir, work);
});

test(
  'the public page names `ceremony fetch`, which gives the layout of `ceremony publish`',
  { timeout: 180_000 },
  async () => {
    assert.ok(existsSync(path.join(dataDir, 'state', 'receipt-key.pem')), 'the served folder has private state');
    const page = await (await browser.newContext()).newPage();
    echoPageErrors(page, 'ceremony');
    await page.goto(`${coordinator.url}/ceremony/`);
    const fetchCommand = (await (await page.waitForSelector('#audit-fetch')).textContent())!;
    assert.equal(fetchCommand, `node bin/ceremony.js fetch ${coordinator.url} ceremony-audit`);
    assert.equal(await page.textContent('#audit-command'), 'node bin/ceremony.js audit ceremony-audit');
    assert.match((await page.textContent('#audit'))!, /This page gives no hash to pin/);
    // The page's commands are the checkout's CLI (the identity card's included), never a script of its own.
    assert.equal(
      await page.locator('#audit pre:not(#identity pre), #audit-script').count(),
      0,
      'no script of the page’s to run',
    );
    assert.match((await page.textContent('#identity-commands'))!, /^node bin\/ceremony\.js audit .*--identifier /m);
    await page.close();

    const fetched = path.join(work, 'fetched');
    // From the checkout (the repository's root): its ceremony-data/ceremony.json, by default.
    const result = await runCli(['fetch', coordinator.url, fetched, '--quiet']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`^next: ceremony audit ${fetched}$`, 'm'));

    const published = path.join(work, 'published');
    await publishCeremony(dataDir, published);

    const fetchedFiles = await listFiles(fetched);
    const publishedFiles = await listFiles(published);
    assert.ok(
      fetchedFiles.includes('final/manifest.json') && fetchedFiles.some((f) => f.startsWith('chains/')),
      fetchedFiles.join('\n'),
    );
    assert.deepEqual(
      fetchedFiles.filter((f) => !publishedFiles.includes(f)),
      [],
      'every fetched file is published at the same path',
    );
    const extra = publishedFiles.filter((f) => !fetchedFiles.includes(f));
    assert.deepEqual(
      extra.filter((f) => f !== 'SHA256SUMS' && !/^circuits\/.+\.circom$/.test(f)),
      [],
      'the publication adds only SHA256SUMS and the circom sources',
    );
    assert.ok(extra.includes('SHA256SUMS') && extra.includes('circuits/lib/mix-chain.circom'), extra.join(', '));
    for (const file of fetchedFiles) {
      if (file === 'ceremony.json') {
        // Copied from the checkout (its own formatting); the content must agree.
        assert.deepEqual(
          JSON.parse(await readFile(path.join(fetched, file), 'utf8')),
          JSON.parse(await readFile(path.join(published, file), 'utf8')),
        );
      } else if (file === 'transcript/transcript.jsonl') {
        // Rebuilt from /api/transcript, whose entries are re-serialised (the
        // `finalised` entry's keys come out in another order); publish copies the file's bytes.
        const entries = async (dir: string) =>
          (await readFile(path.join(dir, file), 'utf8'))
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line));
        assert.deepEqual(await entries(fetched), await entries(published));
      } else {
        assert.equal(await sha256(path.join(fetched, file)), await sha256(path.join(published, file)), file);
      }
    }
    for (const source of extra.filter((f) => f.endsWith('.circom'))) {
      assert.equal(
        await sha256(path.join(published, source)),
        await sha256(path.join(REPO_ROOT, 'ceremony-data', source)),
        `${source} is the checkout's`,
      );
    }
  },
);
