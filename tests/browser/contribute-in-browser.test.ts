/**
 * The browser app end to end in headless Chromium, against a real coordinator (in-process,
 * serving web/dist) with verification by a `ceremony worker` process on a real Redis:
 *
 * - the coordinator pauses the ceremony from the console; alice (test-network sign-in), carol
 *   (an HTTP client) and bob (anonymous: a pasted Semaphore identity, proof made in the browser)
 *   join; the public page shows the queue; the console reopens it;
 * - bob waits 3rd in line before his turn;
 * - alice's page takes all nine turns by itself, streamed (contribution deltas: the inputs
 *   downloaded, mixed by the kernel workers and uploaded by tus as they arrive), to the verdict;
 *   mid-upload on treeUpdate her tab is reloaded (the beforeunload warning is accepted): the page
 *   makes a new contribution with new entropy and a new upload replaces the held one;
 * - bob's first upload is corrupted in transit (the test rewrites one byte of a PATCH body, as a
 *   faulty network would; no hook in the app): the coordinator refuses it, the page says why in
 *   plain words and what happens next (the test holds his retry's download until it has looked),
 *   then takes the new turn and is accepted;
 * - both get an attestation with their hashes and signed receipts that verify;
 * - the coordinator closes and finalises from the console; the manifest and the Solidity
 *   verifiers are listed there and the manifest appears on the public page;
 * - alice opens the receipts file she downloaded on the public page: each of her contributions is
 *   in its circuit's final key, checked there;
 * - the two commands the public page names, `ceremony fetch` then `ceremony audit` (the dev ptau pinned
 *   by the auditor), run from the checkout: the audit passes.
 *
 * The protocol under the page (places, heartbeats, retries) is tested in Node: tests/client/.
 *
 * Screenshots of each step: test-artifacts/browser/*.png. Needs web/dist (`npm run build:web`;
 * `npm test` builds it) and Chromium at /usr/bin/chromium (CHROMIUM_BIN overrides).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Identity } from '@semaphore-protocol/identity';
import type { Page, Request } from 'playwright-core';
import { devPtauHash, TEST_BEACON_ITERATIONS, PROJECT_CIRCUITS } from '../fixtures/ceremony-fixture.ts';
import { startAnvil, type AnvilNode } from '../helpers/anvil.ts';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { runCli } from '../helpers/run-cli.ts';
import { recordStatuses, screenshot, startWebApp, statusesSeen, type WebAppUnderTest } from '../helpers/chromium.ts';
import { verifyReceipt } from '../../server/contributions/receipt-signer.ts';
import { plainWords } from '../../web/src/api/error-messages.ts';

const COORDINATOR_TOKEN = 'coordinator-token-for-browser-tests';
const CIRCUITS = PROJECT_CIRCUITS;

let app: WebAppUnderTest;
/** The chain whose future block the console announces as the beacon. */
let anvil: AnvilNode;
const bobIdentity = new Identity();
// One story told in the describes below, in order: each step takes up the pages and people the last left.
let consolePage: Page;
let publicPage: Page;
let alice: Page;
let bob: Page;
let carol: ContributorClient;
let carolRun: Promise<void>;
let letBobRetry!: () => void;
const bobRetryMayStart = new Promise<void>((resolve) => (letBobRetry = resolve));
// The register chain as the public API shows it when bob's corrupted bytes are sent: he holds the
// turn then, so nothing may move it until his retry (held below) starts.
let registerBeforeBobUpload: Promise<RegisterChainView> | undefined;
/** The receipts file alice's page saved, as she downloaded it. */
let aliceReceiptsFile: string;

async function newPage(label: string): Promise<Page> {
  const page = await app.browser.newPage(label);
  await recordStatuses(page, { computingDetails: true });
  return page;
}

interface RegisterChainView {
  headIndex: number;
  headHash: string | null;
  transcript: unknown[];
}

/** The register chain's head and its transcript entries, from the public API. */
async function registerChainView(baseUrl: string): Promise<RegisterChainView> {
  const ceremony = (await (await fetch(`${baseUrl}/api/ceremony`)).json()) as {
    circuits: Array<{ name: string; headIndex: number; headHash: string | null }>;
  };
  const { entries } = (await (await fetch(`${baseUrl}/api/transcript`)).json()) as {
    entries: Array<{ circuit?: string }>;
  };
  const register = ceremony.circuits.find((c) => c.name === 'register')!;
  return {
    headIndex: register.headIndex,
    headHash: register.headHash,
    transcript: entries.filter((e) => e.circuit === 'register'),
  };
}

const row = (circuit: string) => `#circuits tr[data-circuit="${circuit}"]`;

/** The contribution hash the page computed for `circuit`, as it keeps it to compare with the accepted one. */
function localHash(page: Page, circuit: string): Promise<string | undefined> {
  return page.evaluate((name) => {
    const all = JSON.parse(localStorage.getItem('ceremony.localHashes') ?? '{}') as Record<string, string>;
    return Object.entries(all).find(([key]) => key.endsWith(`|${name}`))?.[1];
  }, circuit);
}

async function waitForAllAccepted(page: Page, timeout: number): Promise<void> {
  await page.waitForFunction(
    (count) => {
      const rows = [...document.querySelectorAll('#circuits tr[data-circuit]')];
      return rows.length === count && rows.every((r) => r.getAttribute('data-status') === 'accepted');
    },
    CIRCUITS.length,
    { timeout, polling: 250 },
  );
}

before(async () => {
  anvil = await startAnvil();
  // The worker's every line reaches stderr, as do the coordinator's warnings.
  app = await startWebApp({
    redis: true,
    worker: { echo: 'all' },
    env: {
      COORDINATOR_TOKEN,
      SEMAPHORE_GROUP_MEMBERS: bobIdentity.commitment.toString(),
      BEACON_RPC_URL: anvil.rpcUrl,
      BEACON_CONFIRMATIONS: '2',
      // Bob's retry is held (letBobRetry) until the test has looked at his refusal, which waits for
      // alice's nine turns: on a loaded machine that outlasts the default 30 s to take a turn, and a
      // missed turn would put him 5 minutes back.
      TAKE_TURN_MS: '300000',
    },
  });
});

after(async () => {
  await app?.close();
  await anvil?.stop();
});

/**
 * The faults the turns meet, set up before the console reopens: alice's first PATCH of her
 * treeUpdate upload is held, never answered (the promise returned says it is), so that her tab can
 * be reloaded mid-upload; one byte of bob's first register upload is flipped on the way, as a bad
 * network would; and his retry's requests of the register inputs (its take, its download) wait for letBobRetry.
 */
async function holdAndCorruptUploads(): Promise<{ aliceUploadHeld: Promise<void> }> {
  let patches = 0;
  let releaseHeld: (() => void) | undefined;
  const aliceUploadHeld = new Promise<void>((resolve) => (releaseHeld = resolve));
  await alice.route('**/api/circuits/treeUpdate/contributions/**', async (route) => {
    if (route.request().method() === 'PATCH' && ++patches === 1) {
      releaseHeld!();
      return; // never answered: the reload cancels it
    }
    await route.continue();
  });
  let corrupted = false;
  await bob.route('**/api/circuits/register/contributions/**', async (route) => {
    const body = route.request().postDataBuffer();
    if (corrupted || route.request().method() !== 'PATCH' || !body || body.length === 0) return route.continue();
    corrupted = true;
    registerBeforeBobUpload = registerChainView(app.coordinator.url);
    await registerBeforeBobUpload;
    const damaged = Buffer.from(body);
    damaged[damaged.length >> 1]! ^= 0xff;
    await route.continue({ postData: damaged });
  });
  // The page asks for the moving URL twice a turn: a HEAD that takes the turn the moment it hears of
  // it, then the download. Everything after the first turn's download is the retry's, and waits.
  let registerDownloads = 0;
  await bob.route('**/api/circuits/register/contribution-inputs', async (route) => {
    if (registerDownloads >= 1) await bobRetryMayStart;
    if (route.request().method() === 'GET') registerDownloads++;
    await route.continue();
  });
  return { aliceUploadHeld };
}

describe('before the turns: the public page, a pause, three contributors join', { timeout: 240_000 }, () => {
  test('the public page needs no sign-in: chains at contribution 0, downloads, how to audit', async () => {
    publicPage = await newPage('public');
    await publicPage.goto(`${app.coordinator.url}/ceremony/`);
    await publicPage.waitForSelector('#circuits details[data-circuit]');
    assert.equal(await publicPage.locator('#circuits details[data-circuit]').count(), CIRCUITS.length);
    assert.equal(await publicPage.textContent('#phase'), 'open for contributions');
    assert.equal(
      await publicPage.getAttribute('#circuit-register tr[data-index="0"] a', 'href'),
      '/api/circuits/register/zkeys/0',
    );
    assert.match((await publicPage.textContent('#final'))!, /Not yet/);
    assert.equal(await publicPage.textContent('#audit-command'), 'node bin/ceremony.js audit ceremony-audit');
    await screenshot(publicPage, '01-public-page-before');
  });

  test('the coordinator signs in to the console and pauses the ceremony', async () => {
    consolePage = await newPage('console');
    await consolePage.goto(`${app.coordinator.url}/console/`);
    await consolePage.fill('#coordinator-token', COORDINATOR_TOKEN);
    await consolePage.click('#coordinator-sign-in button[type=submit]');
    await consolePage.waitForSelector('#console-phase[data-phase="open"]');
    await consolePage.click('#phase-paused');
    await consolePage.waitForSelector('#console-phase[data-phase="paused"]');
    await screenshot(consolePage, '02-console-paused');
  });

  test('alice (test network), carol (HTTP), bob (anonymous: pasted Semaphore identity) sign in and join', async () => {
    alice = await newPage('alice');
    await alice.goto(`${app.coordinator.url}/`);
    await alice.waitForSelector('#demo-sign-in');
    await screenshot(alice, '03-sign-in-choices');
    await alice.fill('#demo-name', 'alice');
    await alice.click('#demo-sign-in button[type=submit]');
    await alice.waitForSelector('#join');
    assert.equal(await alice.textContent('#signed-in-as'), 'alice');
    await alice.click('#join');
    await alice.waitForSelector(`${row('register')}[data-status="waiting"][data-position="1"]`);
    assert.match(
      (await alice.textContent(`${row('register')} .detail`))!,
      /next in line\. No turn starts until the coordinator reopens the ceremony/,
    );
    assert.match((await alice.textContent('#phase-notice'))!, /paused/);

    carol = new ContributorClient(app.coordinator.url);
    await carol.signInDemo('carol');
    await carol.join();

    bob = await newPage('bob');
    await bob.goto(`${app.coordinator.url}/`);
    await bob.click('#semaphore-sign-in summary');
    await bob.fill('#semaphore-import', bobIdentity.export());
    await bob.click('#semaphore-sign-in-pasted');
    await bob.waitForSelector('#join', { timeout: 60_000 });
    assert.equal(await bob.textContent('#signed-in-as'), 'anonymous');
    await bob.click('#join');
    await bob.waitForSelector(`${row('register')}[data-status="waiting"][data-position="3"]`);
    assert.match((await bob.textContent(`${row('register')} .detail`))!, /3rd in line/);
    await screenshot(bob, '04-bob-anonymous-3rd-in-line');

    await publicPage.reload();
    await publicPage.waitForSelector('#circuit-register .queue[data-queue="3"]');
    await screenshot(publicPage, '05-public-page-queue');
  });
});

describe('the turns: streamed, one reloaded mid-upload, one refused and taken again', { timeout: 240_000 }, () => {
  test('the console reopens: alice takes every turn, bob waits, carol contributes between', async () => {
    const { aliceUploadHeld } = await holdAndCorruptUploads();
    await consolePage.click('#phase-open');
    await consolePage.waitForSelector('#console-phase[data-phase="open"]');
    carolRun = (async () => {
      for (const circuit of CIRCUITS) await carol.takeTurn(circuit, 180_000);
    })().catch((error: Error) => {
      // Who holds the circuit carol waits for, so a failure here says where the queue stuck.
      throw new Error(`${error.message}; turns held: ${JSON.stringify(app.coordinator.lobby.activeTurns())}`);
    });

    await aliceUploadHeld;
    await alice.waitForSelector(`${row('treeUpdate')}[data-status="contributing"]`);
    await screenshot(alice, '06-alice-uploading-treeUpdate');
    const hashBeforeReload = await localHash(alice, 'treeUpdate');
    assert.match(hashBeforeReload ?? '', /^[0-9a-f]{128}$/, 'the record (and its hash) is made before the upload');
    const afterReload: Request[] = [];
    let reloaded = false;
    alice.on('request', (request) => {
      if (reloaded && request.url().includes('/api/circuits/treeUpdate/contributions')) afterReload.push(request);
    });
    let warned = false;
    alice.once('dialog', (dialog) => (warned = dialog.type() === 'beforeunload'));
    reloaded = true;
    await alice.reload();
    assert.equal(warned, true, 'a beforeunload warning during the turn');
    await alice.waitForSelector(`${row('treeUpdate')}[data-status="accepted"]`, { timeout: 60_000 });
    await screenshot(alice, '07-alice-after-reload-treeUpdate-accepted');
    // Nothing of a streamed turn survives a reload (the secret least of all): a new contribution,
    // with new entropy, whose new upload replaces the held one.
    const methods = afterReload.map((r) => r.method());
    assert.equal(methods[0], 'POST', `a new upload after the reload: ${methods.join(' ')}`);
    assert.ok(!methods.includes('HEAD'), `the held upload is not resumed: ${methods.join(' ')}`);
    const hashAfterReload = await localHash(alice, 'treeUpdate');
    assert.notEqual(hashAfterReload, hashBeforeReload, 'new entropy after the reload');
    assert.ok(
      (await alice.textContent(`${row('treeUpdate')} .detail`))!.includes('matches the hash this browser computed'),
      'the accepted hash is the one computed after the reload',
    );

    await waitForAllAccepted(alice, 120_000);
    // The page scaled L and H with the kernel pool, one worker per logical core, and said so.
    const { details, cores } = await alice.evaluate(() => ({
      details: (window as unknown as { computingDetails?: string[] }).computingDetails ?? [],
      cores: navigator.hardwareConcurrency,
    }));
    const workers = Math.min(cores, 16);
    assert.ok(
      // Chromium has WebAssembly SIMD: every kernel worker runs the SIMD walk, and the page says so.
      details.length > 0 &&
        details.every((d) => d.includes(`fast kernel on ${workers} worker${workers === 1 ? '' : 's'}, SIMD`)),
      `computing said: ${details.join(' | ')}`,
    );
    await bob.waitForSelector(`${row('register')}:not([data-status^="waiting"])`);

    // Every circuit after the reload (the observer starts afresh with each document) went through each stage.
    const seen = await statusesSeen(alice);
    for (const circuit of CIRCUITS.slice(CIRCUITS.indexOf('treeUpdate') + 1)) {
      const stages = seen[circuit]!.map((s) => s.split('@')[0]!).filter((s) =>
        ['contributing', 'verifying', 'accepted'].includes(s),
      );
      assert.deepEqual([...new Set(stages)], ['contributing', 'verifying', 'accepted'], `${circuit}: ${seen[circuit]}`);
    }
  });

  test(
    'bob’s corrupted upload is refused with its reason in plain words and ' +
      'what happens next; his next turn is accepted',
    async () => {
      const refusal = await bob.waitForSelector(`${row('register')} .refusal`, { timeout: 60_000 });
      const code = (await refusal.getAttribute('data-refusal-code'))!;
      assert.match(code, /^(zkey|contribution|delta)\./, code);
      const words = plainWords(code);
      const text = (await refusal.textContent())!;
      assert.ok(text.includes(words.what) && text.includes(`What happens next: ${words.next}`), text);
      assert.ok((await bob.textContent('#attempts'))!.includes(words.what), 'the attempts list keeps the refusal');
      // The refused upload left the register chain alone: same head (index and file hash), same transcript entries.
      assert.ok(registerBeforeBobUpload, 'bob’s corrupted upload was seen');
      const before = await registerBeforeBobUpload;
      assert.ok(
        before.headIndex >= 1 && before.headHash,
        `register had contributions before bob’s turn: ${JSON.stringify(before)}`,
      );
      assert.deepEqual(
        await registerChainView(app.coordinator.url),
        before,
        'the head or the transcript moved after a refused upload',
      );
      await screenshot(bob, '08-bob-refused-retrying');
      letBobRetry();
      await bob.waitForSelector(`${row('register')}[data-status="accepted"]`, { timeout: 60_000 });
      assert.equal(
        await bob.$(`${row('register')} .refusal`),
        null,
        'the refusal notice goes once the circuit is accepted',
      );
      await screenshot(bob, '09-bob-register-accepted-after-refusal');
    },
  );
});

describe('after the turns: attestations, receipts and the public page', { timeout: 240_000 }, () => {
  test('alice’s attestation lists her hashes; her signed receipts download and verify', async () => {
    await alice.waitForSelector('#attestation');
    await screenshot(alice, '10-alice-attestation');
    const attestation = (await alice.textContent('#attestation-text'))!;
    const ceremony = (await (await fetch(`${app.coordinator.url}/api/ceremony`)).json()) as {
      receiptPublicKey: string;
      circuits: Array<{ name: string; chain: Array<{ contributor: string | null; contributionHash: string | null }> }>;
    };
    for (const circuit of ceremony.circuits) {
      const mine = circuit.chain.find((e) => e.contributor === 'alice')!;
      assert.ok(
        attestation.replace(/\s+/g, '').includes(mine.contributionHash!),
        `${circuit.name} hash in the attestation`,
      );
    }
    const [download] = await Promise.all([alice.waitForEvent('download'), alice.click('#download-receipts')]);
    aliceReceiptsFile = await readFile((await download.path())!, 'utf8');
    type ReceiptsFile = { receiptPublicKey: string; receipts: Array<{ body: string; signature: string }> };
    const file = JSON.parse(aliceReceiptsFile) as ReceiptsFile;
    assert.equal(file.receipts.length, CIRCUITS.length);
    for (const receipt of file.receipts) assert.equal(verifyReceipt(receipt, ceremony.receiptPublicKey), true);
  });

  test('bob and carol finish; bob’s contributions are listed as anonymous on the public page', async () => {
    await waitForAllAccepted(bob, 120_000);
    await bob.waitForSelector('#attestation');
    await carolRun;
    await publicPage.reload();
    await publicPage.waitForSelector('#circuit-register tr[data-index="3"]');
    const names = await publicPage.$$eval('#circuit-register tbody tr .contributor', (cells) =>
      cells.map((c) => c.textContent),
    );
    assert.deepEqual(names, ['initial key (r1cs + ptau)', 'alice', 'carol', 'anonymous']);
    await screenshot(publicPage, '11-public-page-chains');

    // The queue log: searchable by name, filterable by event; bob appears under a pseudonym only.
    const rowsAre = (column: number, expected: string) =>
      publicPage.waitForFunction(
        ([c, e]) => {
          const rows = [...document.querySelectorAll('#queue-log tbody tr')];
          return rows.length > 0 && rows.every((r) => r.children[Number(c)]!.textContent === e);
        },
        [column, expected] as const,
      );
    await publicPage.fill('#queue-log-search', 'carol');
    await publicPage.click('#queue-log button[type=submit]');
    await rowsAre(4, 'carol');
    await publicPage.fill('#queue-log-search', '');
    await publicPage.selectOption('#queue-log-event', 'refused');
    await rowsAre(2, 'refused');
    const refusedBy = await publicPage.$$eval('#queue-log tbody tr td:nth-child(5)', (cells) =>
      cells.map((c) => [c.textContent, c.getAttribute('title')]),
    );
    assert.ok(
      refusedBy.some(([name, id]) => name === 'anonymous' && /^anonymous:[0-9a-f]{16}$/.test(id ?? '')),
      JSON.stringify(refusedBy),
    );
    await screenshot(publicPage, '12-public-page-queue-log');
  });
});

describe('finalised: the console, the public page, the receipts check and the audit', { timeout: 240_000 }, () => {
  test(
    'the coordinator closes, announces a future block as the beacon and finalises with its hash from the ' +
      'console; verifiers and manifest are listed, and the manifest appears on the public page',
    async () => {
      await consolePage.click('#phase-closed');
      await consolePage.waitForSelector('#console-phase[data-phase="closed"]');
      await consolePage.waitForFunction(
        () => !(document.querySelector('#announce-beacon') as HTMLButtonElement | null)?.disabled,
      );
      const blockNumber = (await anvil.latestBlock()) + 8;
      await consolePage.fill('#announce-chain-id', '31337');
      await consolePage.fill('#announce-block', String(blockNumber));
      await consolePage.fill('#announce-iterations', String(TEST_BEACON_ITERATIONS));
      await consolePage.click('#announce-beacon');
      // The hash to publish is the transcript's entry, and the card then says what was announced.
      const shownHash = await consolePage.textContent('#announcement-hash', { timeout: 30_000 });
      const published = (await (await fetch(`${app.coordinator.url}/api/transcript`)).json()) as {
        entries: Array<{ type: string; hash: string }>;
      };
      assert.equal(published.entries.at(-1)!.type, 'beaconAnnouncement');
      assert.equal(shownHash, published.entries.at(-1)!.hash);
      await consolePage.waitForSelector('#beacon-card form[hidden]', { state: 'attached' });
      assert.match(
        (await consolePage.textContent('#beacon-announced'))!,
        new RegExp(
          `^The beacon is the hash of block ${blockNumber} of chain 31337, hashed 2\\^${TEST_BEACON_ITERATIONS} times`,
        ),
      );
      assert.equal(await consolePage.textContent('#beacon-announced-hash'), shownHash);
      assert.equal(await consolePage.isDisabled('#phase-open'), true, 'the ceremony cannot reopen');
      await screenshot(consolePage, '12-console-beacon-announced');

      await anvil.mine(10);
      await consolePage.waitForFunction(
        () => !(document.querySelector('#finalise') as HTMLButtonElement | null)?.disabled,
      );
      assert.equal(await consolePage.isDisabled('#iterations'), true, "the announcement's exponent, not the form's");
      assert.match((await consolePage.textContent('#finalise-hint'))!, /leave its field empty/);
      await screenshot(consolePage, '12-console-closed-ready-to-finalise');
      await consolePage.click('#finalise');
      await consolePage.waitForSelector('#finalised', { timeout: 120_000 });
      assert.equal(await consolePage.locator('#verifiers li').count(), CIRCUITS.length);
      const manifest = (await (await fetch(`${app.coordinator.url}/api/manifest`)).json()) as Record<string, unknown>;
      assert.deepEqual(JSON.parse((await consolePage.textContent('#console-manifest'))!), manifest);
      await screenshot(consolePage, '13-console-finalised');
      const block = await anvil.rpc<{ hash: string }>('eth_getBlockByNumber', [`0x${blockNumber.toString(16)}`, false]);
      const transcript = (await (await fetch(`${app.coordinator.url}/api/transcript`)).json()) as {
        entries: Array<{ type: string; beacon?: string }>;
      };
      const beacons = transcript.entries.filter((entry) => entry.type === 'beacon');
      assert.equal(beacons.length, CIRCUITS.length);
      for (const entry of beacons) assert.equal(entry.beacon, block.hash.slice(2), "the announced block's hash");

      await publicPage.reload();
      await publicPage.waitForSelector('#manifest');
      assert.deepEqual(JSON.parse((await publicPage.textContent('#manifest'))!), manifest);
      assert.equal(await publicPage.textContent('#phase'), 'finalised');
      assert.match(
        (await publicPage.textContent('#transcript'))!,
        new RegExp(`beacon announced: the hash of block ${blockNumber} of chain 31337`),
      );
      assert.equal(await publicPage.locator('#final-files a[href$=".sol"]').count(), CIRCUITS.length);
      const solidity = await fetch(
        `${app.coordinator.url}${await publicPage.getAttribute('#final-files a[href$=".sol"]', 'href')}`,
      );
      assert.equal(solidity.status, 200);
      await screenshot(publicPage, '14-public-page-finalised');
    },
  );

  test('alice opens her receipts file on the public page: each contribution is in its final key, checked', async () => {
    const file = path.join(tmpdir(), `alice-receipts-${process.pid}.json`);
    await writeFile(file, aliceReceiptsFile);
    try {
      await publicPage.setInputFiles('#receipts-file', file);
      const done = '#receipt-check-summary[data-state="done"]';
      const summary = await publicPage.waitForSelector(done, { timeout: 60_000 });
      assert.equal(await summary.getAttribute('data-ok'), 'true', (await summary.textContent()) ?? '');
      assert.equal(await publicPage.locator('.receipt-verdict[data-ok="true"]').count(), CIRCUITS.length);
      // Alice was first on register (the chain's names are checked above: alice, carol, anonymous).
      const register = publicPage.locator('.receipt-verdict[data-circuit="register"] .banner.ok strong');
      assert.equal(await register.textContent(), 'Included in the final key of register at position 1.');
      await screenshot(publicPage, '15-public-page-receipts-checked');
    } finally {
      await rm(file, { force: true });
    }
  });

  test(
    'the commands the public page names, `ceremony fetch` then `ceremony audit` (the dev ptau pinned by the ' +
      'auditor), pass from the checkout',
    async () => {
      assert.equal(
        await publicPage.textContent('#audit-fetch'),
        `node bin/ceremony.js fetch ${app.coordinator.url} ceremony-audit`,
      );
      assert.equal(await publicPage.textContent('#audit-command'), 'node bin/ceremony.js audit ceremony-audit');
      // The how-to says the ptau must be pinned, and how (else an auditor following it meets audit.ptau_unpinned).
      const howTo = (await publicPage.textContent('#audit ol'))!;
      assert.match(howTo, /--ptau-hash HASH/);
      assert.match(howTo, /This page gives no hash to pin/);
      assert.match(howTo, /This is a test network/);
      const folder = path.join(await mkdtemp(path.join(tmpdir(), 'audit-from-page-')), 'ceremony-audit');
      try {
        // From the checkout (the repository's root, its own ceremony-data/ceremony.json); asynchronously: the
        // coordinator answering runs in this process.
        const fetched = await runCli(['fetch', app.coordinator.url, folder, '--quiet']);
        assert.equal(fetched.code, 0, fetched.stderr);
        assert.match(fetched.stdout, /no known public file: the audit needs --ptau-hash/);
        // The dev ptau is no known public file: the auditor pins the hash of the one they made.
        const audit = await runCli(['audit', folder, '--ptau-hash', await devPtauHash(), '--quiet'], {
          timeoutMs: 300_000,
        });
        assert.equal(audit.code, 0, audit.stdout + audit.stderr);
        assert.match(audit.stdout, /audit passed/);
      } finally {
        await rm(path.dirname(folder), { recursive: true, force: true });
      }
    },
  );
});
