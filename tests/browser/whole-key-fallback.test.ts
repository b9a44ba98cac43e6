/**
 * The page's fallback to whole keys (web/src/contribute/contributor-session.ts): it streams deltas
 * only when `GET /api/ceremony` offers `zkey-delta-v2` and the kernel runs in the browser. In
 * headless Chromium against a real coordinator serving the built app, on a generated 2^12 circuit:
 *  - an older coordinator (the test drops `zkey-delta-v2` from the page's `/api/ceremony` answers,
 *    leaving v1 alone, which the page does not send): the page downloads the whole head, computes
 *    and uploads the whole next key;
 *  - a browser without WebAssembly on the page (the kernel cannot run, StreamingUnavailable): the
 *    same, with snarkjs alone in its worker.
 * Each time the coordinator says it was a whole-key turn: the upload it completed is the full key
 * (head plus one record), nothing was spliced, no skeleton was ever cut (the contribution-inputs
 * route never ran); and the contribution is accepted with the hash the page computed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { benchChain } from '../../bench/bench-chain.ts';
import { BENCH_CIRCUIT, benchCeremonyCopy, benchCeremonyTemplate } from '../../bench/bench-ceremony.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import type { ServiceLog } from '../../server/ceremony-service.ts';
import { recordStatuses, screenshot, startWebApp, statusesSeen, type WebAppUnderTest } from '../helpers/chromium.ts';
import { warningsToStderr } from '../helpers/warnings-to-stderr.ts';

const DELTA_FORMAT = 'zkey-delta-v2';
/** The most a contribution record adds to a key (the coordinator's own bound for a delta, 64 KiB). */
const RECORD_SLACK_BYTES = 64 * 1024;
const row = `#circuits tr[data-circuit="${BENCH_CIRCUIT}"]`;
const inputsPath = `/api/circuits/${BENCH_CIRCUIT}/contribution-inputs`;

interface LogLine {
  message: string;
  fields?: Record<string, unknown>;
}
const lines: LogLine[] = [];
const warnings = warningsToStderr();
const log: ServiceLog = {
  info: (message, fields) => void lines.push({ message, fields }),
  warn: (message, fields) => {
    lines.push({ message, fields });
    warnings.warn(message, fields);
  },
};

let dataDir: string;
let app: WebAppUnderTest;

before(async () => {
  const template = await benchCeremonyTemplate(await benchChain(12), '12');
  dataDir = await benchCeremonyCopy(template, 'whole-key-fallback');
  app = await startWebApp({ dataDir, log });
});

after(async () => {
  await app?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** The coordinator's skeletons of heads (written the first time contribution-inputs is asked for). */
async function skeletonsCut(): Promise<string[]> {
  return readdir(path.join(dataDir, 'state', 'skeletons'), { recursive: true }).catch(() => []);
}

/** The circuit's head, as the coordinator publishes it. */
async function headIndex(): Promise<number> {
  const ceremony = (await (await fetch(`${app.coordinator.url}/api/ceremony`)).json()) as {
    circuits: Array<{ name: string; headIndex: number }>;
  };
  return ceremony.circuits.find((c) => c.name === BENCH_CIRCUIT)!.headIndex;
}

/** Signs `name` in, joins, and waits for the circuit's contribution to be accepted. */
async function takeTurn(page: Page, name: string): Promise<{ inputsRequested: number }> {
  let inputsRequested = 0;
  page.on('request', (request) => {
    // A HEAD of the moving URL takes the turn (contributor-driver-parts.ts take); a GET would download them.
    if (request.method() === 'GET' && new URL(request.url()).pathname.startsWith(inputsPath)) inputsRequested++;
  });
  await recordStatuses(page, { computingDetails: true });
  await page.goto(`${app.coordinator.url}/`);
  await page.fill('#demo-name', name);
  await page.click('#demo-sign-in button[type=submit]');
  await page.waitForSelector('#join');
  await page.click('#join');
  await page.waitForSelector(`${row}[data-status="accepted"]`, { timeout: 90_000 });
  await screenshot(page, `whole-key-fallback-${name}`);
  const accepted = (await page.textContent(`${row} .detail`))!;
  assert.ok(accepted.includes('matches the hash this browser computed'), accepted);
  return { inputsRequested };
}

/** What the coordinator logged since line `from` of the turn on head `head`, checked as a whole key's. */
async function assertWholeKeyTurn(head: number, from: number): Promise<void> {
  assert.equal(await headIndex(), head + 1, 'the chain moved by one');
  const logged = lines.slice(from);
  const messages = logged.map((l) => l.message);
  const headSize = (await stat(ceremonyPaths(dataDir).zkeyPath(BENCH_CIRCUIT, head))).size;
  const complete = logged.filter((l) => l.message === 'contribution upload complete');
  assert.equal(complete.length, 1, `one upload completed: ${messages.join(' | ')}`);
  const bytes = Number(complete[0]!.fields?.bytes);
  assert.ok(
    bytes > headSize && bytes < headSize + RECORD_SLACK_BYTES,
    `the upload is the whole next key: ${bytes} bytes, head ${headSize}`,
  );
  assert.ok(!messages.some((m) => m.includes('delta')), `no delta: ${messages.join(' | ')}`);
  assert.ok(messages.includes('contribution accepted'), `accepted: ${messages.join(' | ')}`);
  // The coordinator cuts the new head's inputs as it accepts it (ready for the next turn, which may be
  // streamed); none of the turn's own head: the page's requests (inputsRequested) are checked too.
  const ahead = `${BENCH_CIRCUIT}_${head + 1}.inputs`;
  const cut = await skeletonsCut();
  assert.deepEqual(
    cut.filter((file) => file !== ahead),
    [],
    `no contribution inputs but the new head's, made ahead: ${cut.join(' ')}`,
  );
  const next = (await stat(ceremonyPaths(dataDir).zkeyPath(BENCH_CIRCUIT, head + 1))).size;
  assert.equal(next, bytes, 'the accepted key is the upload as it came');
}

test('a coordinator that does not offer deltas gets whole keys', { timeout: 120_000 }, async () => {
  const page = await app.browser.newPage('no-delta');
  let answersRewritten = 0;
  await page.route('**/api/ceremony', async (route) => {
    const response = await route.fetch();
    const body = (await response.json()) as { contributionFormats?: string[] };
    const formats = body.contributionFormats ?? [];
    assert.ok(formats.includes(DELTA_FORMAT), 'this coordinator offers deltas');
    body.contributionFormats = formats.filter((format) => format !== DELTA_FORMAT);
    answersRewritten++;
    await route.fulfill({ response, json: body });
  });
  const [head, from] = [await headIndex(), lines.length];
  const { inputsRequested } = await takeTurn(page, 'older-coordinator');

  await assertWholeKeyTurn(head, from);
  assert.ok(answersRewritten > 0, 'the page read the ceremony through the rewrite');
  assert.equal(inputsRequested, 0, 'the page never asked for the contribution inputs');
  const seen = (await statusesSeen(page))[BENCH_CIRCUIT]!;
  assert.ok(seen.includes('computing') && seen.includes('uploading'), `whole-key stages: ${seen.join(' ')}`);
  assert.ok(!seen.includes('contributing'), `no streamed stage: ${seen.join(' ')}`);
});

test('a browser whose page has no WebAssembly (no kernel) moves whole keys', { timeout: 120_000 }, async () => {
  const page = await app.browser.newPage('no-kernel');
  // The page's own global only: snarkjs's worker keeps its WebAssembly, as in a browser whose
  // kernel cannot start.
  await page.addInitScript(() => {
    delete (globalThis as { WebAssembly?: unknown }).WebAssembly;
  });
  const [head, from] = [await headIndex(), lines.length];
  const { inputsRequested } = await takeTurn(page, 'no-kernel');

  await assertWholeKeyTurn(head, from);
  assert.equal(inputsRequested, 0, 'the page never asked for the contribution inputs');
  const details = await page.evaluate(() => (window as unknown as { computingDetails?: string[] }).computingDetails);
  assert.ok(
    details?.some((detail) => detail.includes('this browser has no WebAssembly')),
    `snarkjs alone: ${details?.join(' | ')}`,
  );
});
