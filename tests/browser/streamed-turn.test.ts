/**
 * The page's streamed turn (contribution deltas, web/src/contribute/streamed-turn.ts) through a
 * shaped home link, in headless Chromium against a real coordinator serving the built app, on a
 * generated 2^14 circuit (L and H about 3 MiB: more than one upload request):
 *  - the upload starts while the download is still running (download, compute and upload overlap);
 *  - the second upload request is cut as a dropped connection would be: the upload resumes from
 *    the coordinator's offset (HEAD, then PATCH from there), with no second download, no new
 *    upload and no new record (the accepted hash is the one the page computed, once);
 *  - the page shows the bytes each way with their rates and the time left while it works;
 *  - far fewer bytes cross the link than the key's size.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rm, stat } from 'node:fs/promises';
import { chromium, type Browser, type Page } from 'playwright-core';
import { benchChain } from '../../bench/bench-chain.ts';
import { BENCH_CIRCUIT, benchCeremonyCopy, benchCeremonyTemplate } from '../../bench/bench-ceremony.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { builtWebApp, CHROMIUM_ARGS, CHROMIUM_BIN, echoPageErrors, screenshot } from '../helpers/chromium.ts';
import { chromiumProxyArgs, startShapedProxy, type ShapedProxy } from '../helpers/shaped-proxy.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';

const row = `#circuits tr[data-circuit="${BENCH_CIRCUIT}"]`;
let dataDir: string;
let coordinator: TestCoordinator;
let proxy: ShapedProxy;
let browser: Browser;

before(async () => {
  const template = await benchCeremonyTemplate(await benchChain(14), '14');
  dataDir = await benchCeremonyCopy(template, 'streamed-turn');
  coordinator = await startTestCoordinator({ dataDir, tickIntervalMs: 100, webDir: builtWebApp() });
  // Slow enough that L and H take seconds to arrive, as on a home link with a large key.
  proxy = await startShapedProxy({ downMbit: 4, upMbit: 8 });
  browser = await chromium.launch({
    executablePath: CHROMIUM_BIN,
    args: [...CHROMIUM_ARGS, ...chromiumProxyArgs(proxy)],
  });
});

after(async () => {
  await browser?.close();
  await proxy?.stop();
  await coordinator?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

interface Seen {
  method: string;
  at: number;
  offset?: number;
}

test(
  'a streamed turn overlaps download and upload, and a dropped request resumes without recomputing',
  {
    timeout: 180_000,
  },
  async () => {
    const page: Page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
    echoPageErrors(page, 'streamed');
    await page.goto(`${coordinator.url}/`);
    await page.fill('#demo-name', 'streamer');
    await page.click('#demo-sign-in button[type=submit]');
    await page.waitForSelector('#join');

    const inputs = `/api/circuits/${BENCH_CIRCUIT}/contribution-inputs`;
    const uploads = `/api/circuits/${BENCH_CIRCUIT}/contributions`;
    const downloads: number[] = [];
    let downloadEndedAt: number | undefined;
    const uploadRequests: Seen[] = [];
    const headOffsets: number[] = [];
    // The moving URL answers with a redirect to the head's own (…/contribution-inputs/N): that is the download.
    const isInputsDownload = (url: string): boolean => new URL(url).pathname.startsWith(`${inputs}/`);
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (isInputsDownload(request.url())) downloads.push(Date.now());
      if (url.pathname.startsWith(uploads)) {
        const offset = request.headers()['upload-offset'];
        uploadRequests.push({ method: request.method(), at: Date.now(), offset: offset ? Number(offset) : undefined });
      }
    });
    page.on('requestfinished', (request) => {
      if (isInputsDownload(request.url())) downloadEndedAt = Date.now();
    });
    page.on('response', (response) => {
      if (response.request().method() === 'HEAD' && new URL(response.url()).pathname.startsWith(uploads))
        headOffsets.push(Number(response.headers()['upload-offset']));
    });
    // The second upload request is cut, as a dropped connection would cut it.
    let patches = 0;
    await page.route(`**${uploads}/**`, async (route) => {
      if (route.request().method() === 'PATCH' && ++patches === 2) return route.abort('connectionreset');
      await route.continue();
    });

    const bytesBefore = proxy.bytes();
    // While it works, the row names each way's bytes with a rate, and the time left.
    const workingWords = page.waitForFunction(
      (selector) => {
        const detail = document.querySelector(`${selector} .detail`)?.textContent ?? '';
        return /received [\d.]+ [kMG]?B of [\d.]+ [kMG]?B at [\d.]+ [kMG]?B\/s/.test(detail) &&
          /About \d+ (s|min)/.test(detail)
          ? detail
          : false;
      },
      row,
      { polling: 100, timeout: 120_000 },
    );
    await page.click('#join');
    const detail = await (await workingWords).jsonValue();
    await page.waitForSelector(`${row}[data-status="accepted"]`, { timeout: 150_000 });
    await screenshot(page, 'streamed-turn-accepted');
    const bytes = proxy.bytes();

    assert.match(String(detail), /mixed \d+% of the points, sent /, String(detail));
    assert.equal(downloads.length, 1, 'the inputs are downloaded once: nothing is recomputed');
    const methods = uploadRequests.map((r) => r.method);
    assert.equal(methods.filter((m) => m === 'POST').length, 1, `one upload: ${methods.join(' ')}`);
    const firstPatch = uploadRequests.find((r) => r.method === 'PATCH')!;
    assert.ok(
      downloadEndedAt !== undefined && firstPatch.at < downloadEndedAt,
      'the upload starts before the download ends',
    );

    // The cut request is followed by a HEAD for the coordinator's offset and a PATCH from there.
    const patchesSeen = uploadRequests.filter((r) => r.method === 'PATCH');
    assert.ok(patchesSeen.length >= 3, `the cut request was sent again: ${methods.join(' ')}`);
    assert.ok(methods.includes('HEAD'), `a HEAD asks for the offset after the drop: ${methods.join(' ')}`);
    const resumedFrom = headOffsets[0]!;
    assert.ok(resumedFrom > 0, `the coordinator held the first request's bytes: ${resumedFrom}`);
    assert.equal(patchesSeen[2]!.offset, resumedFrom, 'the upload resumes from the coordinator’s offset');

    const accepted = (await page.textContent(`${row} .detail`))!;
    assert.ok(accepted.includes('matches the hash this browser computed'), accepted);

    const keySize = (await stat(ceremonyPaths(dataDir).zkeyPath(BENCH_CIRCUIT, 0))).size;
    const down = bytes.down - bytesBefore.down;
    const up = bytes.up - bytesBefore.up;
    assert.ok(up < 0.6 * keySize, `up ${up} bytes, key ${keySize}`);
    // Down also carries the page's two worker scripts (snarkjs, the kernel): still well under the key.
    assert.ok(down < keySize, `down ${down} bytes, key ${keySize}`);
  },
);
