/**
 * The public page's record search and receipt check, in Chromium against a real coordinator
 * serving a finalised ceremony whose receipts its key signed: a name and a hash (as snarkjs
 * prints it) find the contributions, each listed in its final key's history; one paste of a
 * contributor's receipts file says, for each circuit, "included in the final key", with what each
 * step established (the later records' pairings and the fixed sections included), what is left to
 * the audit and the page's own timing; a forged receipt, a coordinator serving another final key
 * than its transcript names, and one recording a key with a rewritten history each get their own
 * plain words, as does a transcript of format 1 (refused: the page says to use the CLI with
 * --allow-legacy-transcript). The audit card shows the ceremony's identity and the commands that
 * check it. On a 2^14 bench chain's final key, the page reads under 1% of the key, counted by the page and by a
 * proxy in front of the coordinator.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import type { Browser, Page } from 'playwright-core';
import { TEST_BEACON, TEST_BEACON_ITERATIONS } from '../fixtures/ceremony-fixture.ts';
import { finalisedChainCeremony, servableCopy } from '../fixtures/finalised-chain-ceremony.ts';
import { benchChain } from '../../bench/bench-chain.ts';
import { builtWebApp, echoPageErrors, launchChromium, screenshot } from '../helpers/chromium.ts';
import { startCountingProxy } from '../helpers/counting-proxy.ts';
import { receiptsCeremony, type ReceiptsCeremony } from '../helpers/receipts-ceremony.ts';
import { rewriteHistory } from '../helpers/rewrite-mpc-section.ts';
import { rewriteTranscript } from '../helpers/forge-transcript.ts';
import { hashKeyFile } from '../../core/zkey/zkey-hashes.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { loadServerConfig } from '../../server/config/server-config.ts';
import { startCoordinator, type RunningCoordinator } from '../../server/start-coordinator.ts';
import { joined } from '../helpers/joined-regex.ts';

const quiet = { info: () => {}, warn: () => {} };
let ceremony: ReceiptsCeremony;
let coordinator: RunningCoordinator;
let browser: Browser;
let work: string;
let webDir: string;
/** The test ceremony's public page, one for the describes on it: each test finds it as the last left it. */
let page: Page;

before(async () => {
  webDir = builtWebApp();
  ceremony = await receiptsCeremony();
  work = await mkdtemp(path.join(tmpdir(), 'receipt-page-'));
  coordinator = await startCoordinator(loadServerConfig({ CEREMONY_DATA: ceremony.dataDir, PORT: '0' }), {
    log: quiet,
    webDir,
  });
  browser = await launchChromium();
  page = await publicPage(coordinator.url);
});

after(async () => {
  await browser?.close();
  await coordinator?.close();
  await releaseBn128();
  await rm(ceremony.dataDir, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

async function publicPage(origin: string): Promise<Page> {
  const context = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
  const page = await context.newPage();
  echoPageErrors(page, 'ceremony');
  await page.goto(`${origin}/ceremony/`);
  await page.waitForSelector('#record-query');
  return page;
}

/** Pastes `text` into the field as a person does: through the clipboard, Ctrl+V (over what it held). */
async function paste(page: Page, text: string): Promise<void> {
  await page.evaluate((t) => navigator.clipboard.writeText(t), text);
  await page.focus('#record-query');
  await page.keyboard.press('Control+V');
}

async function checked(
  page: Page,
): Promise<{ ok: string; elapsedMs: number; keyBytes: number; keySize: number; text: string }> {
  const summary = await page.waitForSelector('#receipt-check-summary[data-state="done"]', { timeout: 60_000 });
  const attribute = async (name: string): Promise<string> => (await summary.getAttribute(name)) ?? '';
  return {
    ok: await attribute('data-ok'),
    elapsedMs: Number(await attribute('data-elapsed-ms')),
    keyBytes: Number(await attribute('data-key-bytes')),
    keySize: Number(await attribute('data-key-size')),
    text: (await summary.textContent()) ?? '',
  };
}

/** A contribution hash as snarkjs prints it: four tab-indented lines of four 8-digit groups. */
const snarkjsStyle = (hash: string): string =>
  (hash.match(/.{32}/g) ?? []).map((line) => `\t\t${line.match(/.{8}/g)!.join(' ')}`).join('\n');

describe('on the test ceremony: the record search, and a receipts file that passes', () => {
  test(
    'a name, or a hash as snarkjs prints it, finds the contributions; each is in its final key’s history',
    { timeout: 60_000 },
    async () => {
      await page.fill('#record-query', 'BOB');
      await page.press('#record-query', 'Enter');
      await page.waitForFunction(() => document.querySelectorAll('#record-table [data-final="listed"]').length === 9);
      assert.equal(await page.locator('#record-table tbody tr').count(), 9);
      const bobRegister = JSON.parse(ceremony.receiptsOf('bob').find((r) => r.body.includes('"register"'))!.body);
      await page.fill('#record-query', snarkjsStyle(bobRegister.contributionHash));
      await page.press('#record-query', 'Enter');
      await page.waitForSelector('#record-table [data-final="listed"]');
      const rows = await page.$$eval('#record-table tbody tr', (trs) =>
        trs.map((tr) => [
          tr.getAttribute('data-circuit'),
          tr.getAttribute('data-index'),
          tr.querySelector('[data-final]')!.textContent,
        ]),
      );
      assert.deepEqual(rows, [['register', '2', '✓ listed at record 2 of 3']]);
      await page.fill('#record-query', 'nobody-of-that-name');
      await page.press('#record-query', 'Enter');
      await page.waitForSelector('#record-none');
      await screenshot(page, 'receipt-01-search');
    },
  );

  test(
    'one paste of the receipts file the contribute page saves: every circuit included, checked',
    { timeout: 60_000 },
    async () => {
      const saved = {
        ceremony: ceremony.ceremonyId,
        coordinator: coordinator.url,
        receiptPublicKey: ceremony.signer.publicKeyPem,
        signature: 'Ed25519 over each receipt body (UTF-8)',
        receipts: ceremony.receiptsOf('alice'),
      };
      assert.equal(await page.inputValue('#record-query'), 'nobody-of-that-name', 'the field holds the last search');
      await paste(page, JSON.stringify(saved, null, 2));
      const result = await checked(page);
      assert.equal(JSON.parse(await page.inputValue('#record-query')).receipts.length, 9, 'the paste replaced it');
      assert.equal(result.ok, 'true', result.text);
      assert.equal(await page.locator('.receipt-verdict[data-ok="true"]').count(), 9);
      const register = page.locator('.receipt-verdict[data-circuit="register"]');
      assert.equal(
        await register.locator('.banner.ok strong').textContent(),
        'Included in the final key of register at position 1.',
      );
      assert.match(
        (await register.locator('.banner.ok .detail').textContent()) ?? '',
        /^Left to the audit: that contribution 0 is the key the circuit's r1cs and the pinned powers of tau give; /,
      );
      const steps = await register.locator('.receipt-steps li').allTextContents();
      assert.deepEqual(
        steps.map((s) => s.split(':')[0]),
        ['✓ Signature', '✓ Transcript', '✓ Key', '✓ Later contributions', '✓ Fixed parts'],
      );
      assert.match(
        steps[2]!,
        joined(
          '',
          /the final key of register lists it at position 1 of 3; its history chains from the circuit hash to the /,
          /header's δ, and the bytes read are the ones the transcript's section hashes name/,
        ),
      );
      assert.match(steps[3]!, /records 2 to 3: every proof of knowledge and δ step verified \(pairings\)/);
      assert.match(steps[4]!, /sections 1, 3–7 \(IC, coefficients, A, B1, B2\) and α, β, γ are contribution 0's/);
      assert.match(
        result.text,
        joined(
          '',
          /^All 9 checked: included\. Checked in \d+\.\d\d s, reading .* of keys by range requests\. /,
          /Ceremony identifier \(the hash of its transcript’s last entry\): [0-9a-f]{128}\.$/,
        ),
      );
      assert.ok(
        result.keyBytes > 0 && result.keyBytes < result.keySize / 10,
        `${result.keyBytes} of ${result.keySize}`,
      );
      assert.ok(await page.isVisible('#receipt-check-proves'), 'what the check proves is on the page');
      assert.equal(await page.getAttribute('#receipt-check-proves a[href="#audit"]', 'href'), '#audit');
      await screenshot(page, 'receipt-02-checked');
    },
  );
});

describe('on the test ceremony: its identity, and the commands that check it', () => {
  test('the audit card shows the transcript’s last hash, and the audit and deployment commands', async () => {
    const entries = (await readFile(path.join(ceremony.dataDir, 'transcript', 'transcript.jsonl'), 'utf8'))
      .trim()
      .split('\n');
    const last = JSON.parse(entries.at(-1)!) as { hash: string };
    const identity = page.locator('#identity[data-state="ready"]');
    assert.equal(await identity.getAttribute('data-identifier'), last.hash);
    assert.equal(await page.textContent('#identity-hash'), last.hash);
    assert.equal(
      await page.textContent('#identity-commands'),
      `node bin/ceremony.js audit ceremony-audit --identifier ${last.hash}\n` +
        'node bin/ceremony.js verify-deployment RPC ceremony-audit/final/manifest.json verifiers.json ' +
        '--ceremony ceremony-audit',
    );
    assert.equal(await page.locator('#identity-legacy').count(), 0, 'a format-2 transcript');
  });
});

describe('on the test ceremony: a receipt that fails, in plain words', () => {
  test(
    'no downgrade: a transcript of format 1 is refused on the page, which says to use the CLI with its flag',
    { timeout: 60_000 },
    async () => {
      const transcript = path.join(ceremony.dataDir, 'transcript', 'transcript.jsonl');
      const original = path.join(work, 'format-2-transcript.jsonl');
      await cp(transcript, original);
      await rewriteTranscript(ceremony.dataDir, (entries) =>
        entries.map((entry) => {
          const { version: _version, ...rest } = entry as typeof entry & { sectionHashes?: unknown };
          delete rest.sectionHashes;
          return rest as typeof entry;
        }),
      );
      try {
        await paste(page, JSON.stringify(ceremony.receiptsOf('alice')[0]));
        assert.equal((await checked(page)).ok, 'false');
        const verdict = page.locator('.receipt-verdict');
        assert.equal(await verdict.getAttribute('data-error-code'), 'transcript.legacy_format');
        assert.match(
          (await verdict.textContent())!,
          joined(
            '',
            /The ceremony’s transcript is of the old format 1.*/,
            /run `ceremony verify-receipt RECEIPTS\.json DIR --allow-legacy-transcript` from your own checkout/,
          ),
        );
        // The page's refresh shows the identity card's warning too.
        await page.waitForSelector('#identity-legacy', { timeout: 15_000 });
        await screenshot(page, 'receipt-05-legacy');
      } finally {
        await cp(original, transcript);
      }
    },
  );

  test('a forged receipt: the signature step fails, in plain words', { timeout: 60_000 }, async () => {
    const [receipt] = ceremony.receiptsOf('alice');
    const forged = { ...receipt!, body: receipt!.body.replace('"alice"', '"mallory"') };
    await paste(page, JSON.stringify(forged));
    const result = await checked(page);
    assert.equal(result.ok, 'false');
    const verdict = page.locator('.receipt-verdict[data-ok="false"]');
    assert.equal(await verdict.getAttribute('data-error-code'), 'receipt.bad_signature');
    assert.match(
      (await verdict.locator('.banner.bad').textContent())!,
      /The receipt’s signature does not match the coordinator’s receipt key/,
    );
    await screenshot(page, 'receipt-03-forged');
  });

  test(
    'a coordinator serving another final key than its transcript names, then one recording a rewritten history',
    { timeout: 60_000 },
    async () => {
      const finalKey = path.join(ceremony.dataDir, 'final', 'register.zkey');
      const transcript = path.join(ceremony.dataDir, 'transcript', 'transcript.jsonl');
      const original = path.join(work, 'register.zkey');
      const originalTranscript = path.join(work, 'transcript.jsonl');
      await cp(finalKey, original);
      await cp(transcript, originalTranscript);
      const silent = { debug() {}, info() {}, warn() {}, error() {} };
      assert.ok(
        await snarkjs.zKey.beacon(
          path.join(ceremony.dataDir, 'chains', 'register', 'register_0001.zkey'),
          finalKey,
          'Final beacon',
          TEST_BEACON,
          TEST_BEACON_ITERATIONS,
          silent,
        ),
      );
      await paste(page, JSON.stringify({ receipts: ceremony.receiptsOf('bob') }));
      assert.equal((await checked(page)).ok, 'false');
      assert.equal(await page.locator('.receipt-verdict[data-ok="false"]').count(), 1, 'only register is affected');
      const served = page.locator('.receipt-verdict[data-circuit="register"]');
      assert.equal(await served.getAttribute('data-error-code'), 'receipt.served_bytes_mismatch');
      assert.match(
        (await served.textContent())!,
        joined(
          '',
          /The parts of the key the coordinator sent this check are not the ones its public transcript records.*/,
          /the bytes of section 2 \(Groth16 header\) of the final key of register this check was served/,
        ),
      );

      // The coordinator records the key it serves: now its own history must hold together.
      await rewriteHistory(original, finalKey, { records: (records) => [records[1]!, records[0]!, records[2]!] });
      const hashes = await hashKeyFile(finalKey, 'the rewritten final key');
      await rewriteTranscript(ceremony.dataDir, (entries) =>
        entries.map((e) => (e.type === 'beacon' && e.circuit === 'register' ? { ...e, ...hashes } : e)),
      );
      await paste(page, JSON.stringify(ceremony.receiptsOf('alice')[0]));
      await checked(page);
      const rewritten = page.locator('.receipt-verdict');
      assert.equal(await rewritten.getAttribute('data-error-code'), 'receipt.history_invalid');
      assert.match(
        (await rewritten.textContent())!,
        /The key’s own history of contributions does not hold together.*record 1's transcript digest does not follow/,
      );
      await screenshot(page, 'receipt-04-rewritten');
      await cp(original, finalKey);
      await cp(originalTranscript, transcript);
    },
  );
});

test(
  'on a 2^14 final key, the page reads under 1% of it: its own count and the proxy’s agree',
  { timeout: 900_000 },
  async (t) => {
    const chain = await finalisedChainCeremony(await benchChain(14), 'bench14');
    const served = await servableCopy(chain.dataDir, work);
    const keySize = (await stat(path.join(served, 'final', `${chain.circuit}.zkey`))).size;
    const large = await startCoordinator(loadServerConfig({ CEREMONY_DATA: served, PORT: '0' }), {
      log: quiet,
      webDir,
    });
    const proxy = await startCountingProxy(large.url);
    try {
      const page = await publicPage(proxy.url);
      const file = path.join(work, 'two.json');
      await cp(chain.receiptsFile('two'), file);
      await page.setInputFiles('#receipts-file', file);
      const result = await checked(page);
      assert.equal(result.ok, 'true', result.text);
      assert.equal(
        await page.locator('.receipt-verdict .banner.ok strong').textContent(),
        'Included in the final key of mul at position 2.',
      );
      const keyRequests = proxy.requests.filter((r) => r.url.startsWith('/api/final/'));
      assert.ok(
        keyRequests.every((r) => r.status === 206 && r.range !== undefined),
        JSON.stringify(keyRequests),
      );
      // The final key's ranges and contribution 0's header (the fixed sections are checked against it).
      const sent = proxy.bytesSent('/api/final/') + proxy.bytesSent(`/api/circuits/${chain.circuit}/zkeys/0`);
      t.diagnostic(
        `final key ${keySize} bytes; the page read ${result.keyBytes} ` +
          `(${((result.keyBytes / keySize) * 100).toFixed(3)}%), the coordinator sent ${sent} with headers, ` +
          `in ${keyRequests.length} range requests; checked in ${result.elapsedMs} ms (page's timing)`,
      );
      assert.equal(result.keySize, keySize);
      assert.ok(keySize > 5_000_000, `a key large enough to make the point (${keySize} bytes)`);
      assert.ok(result.keyBytes < keySize / 100 && sent < keySize / 100, `${result.keyBytes} / ${sent} of ${keySize}`);
      assert.ok(result.keyBytes <= sent, 'the page counts bodies, the proxy bodies and headers');
      await writeFile(path.join(work, 'done'), '');
    } finally {
      await proxy.close();
      await large.close();
    }
  },
);
