/**
 * The terminal client and the page in one queue: a real coordinator (in-process, serving web/dist)
 * with verification by a `ceremony worker` process on a real Redis; `ceremony contribute
 * --coordinator URL --demo …` as a process takes all nine test circuits while a contributor in
 * headless Chromium waits in line behind it on each, then takes its own turn. The ceremony opens
 * only once both have joined, so the order in line is the order of joining: terminal, then page.
 *
 * Needs web/dist (`npm run build:web`; `npm test` builds it) and Chromium at /usr/bin/chromium.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { newCeremonyDir, REPO_ROOT, PROJECT_CIRCUITS } from '../fixtures/ceremony-fixture.ts';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { startGroup, stopAllGroups, type GroupProcess } from '../helpers/process-group.ts';
import {
  builtWebApp,
  echoPageErrors,
  launchChromium,
  recordStatuses,
  screenshot,
  statusesSeen,
} from '../helpers/chromium.ts';
import { initCeremony } from '../../core/ceremony/init-ceremony.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { loadServerConfig } from '../../server/config/server-config.ts';
import { startCoordinator, type RunningCoordinator } from '../../server/start-coordinator.ts';
import { verifyReceipt } from '../../server/contributions/receipt-signer.ts';

const CIRCUITS = PROJECT_CIRCUITS;

let redis: RedisServer;
let worker: GroupProcess;
let coordinator: RunningCoordinator;
let dataDir: string;
let workDir: string;
let browser: Browser;

before(async () => {
  const webDir = builtWebApp();
  redis = await startRedisServer();
  dataDir = await newCeremonyDir();
  workDir = await mkdtemp(path.join(tmpdir(), 'terminal-and-page-'));
  await initCeremony(dataDir);
  worker = startGroup(process.execPath, [path.join(REPO_ROOT, 'bin', 'ceremony.js'), 'worker', '--redis', redis.url], {
    cwd: REPO_ROOT,
    env: process.env,
    label: 'ceremony worker',
  });
  await worker.waitFor(/ready on queue/, 60_000);
  coordinator = await startCoordinator(
    loadServerConfig({ CEREMONY_DATA: dataDir, PORT: '0', REDIS_URL: redis.url, RATE_LIMIT_UPLOAD_CREATION: '1000' }),
    {
      log: { info: () => {}, warn: () => {} },
      tickIntervalMs: 100,
      webDir,
    },
  );
  // Not open yet (setup): nobody gets a turn until both have joined, so the terminal is first in every line.
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await stopAllGroups();
  await coordinator?.close();
  await worker?.stop('SIGTERM');
  await redis?.stop();
  await releaseBn128();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

async function pageOf(label: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  echoPageErrors(page, label);
  await recordStatuses(page);
  return page;
}

test(
  'all nine circuits accepted from the terminal while a contributor in the browser waits in line behind it',
  { timeout: 300_000 },
  async () => {
    const receiptsFile = path.join(workDir, 'receipts.json');
    const terminal = startGroup(
      process.execPath,
      [
        path.join(REPO_ROOT, 'bin', 'ceremony.js'),
        'contribute',
        '--coordinator',
        coordinator.url,
        '--demo',
        'terminal-tess',
        '--receipts',
        receiptsFile,
      ],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, TMPDIR: workDir },
        label: 'ceremony contribute --coordinator',
      },
    );
    await terminal.waitFor(
      /register: waiting: next in line · no turn starts until the coordinator opens the ceremony/,
      60_000,
    );
    assert.match(
      terminal.output(),
      /You are in line; keep this command running: .* you keep your place but are passed over/,
    );

    const page = await pageOf('page');
    await page.goto(`${coordinator.url}/`);
    await page.fill('#demo-name', 'page-paul');
    await page.click('#demo-sign-in button[type=submit]');
    await page.waitForSelector('#join');
    await page.click('#join');
    await page.waitForSelector('#circuits tr[data-circuit="register"][data-status="waiting"][data-position="2"]');
    assert.match(
      (await page.textContent('#presence-notice'))!,
      /^You are in line; keep this page open: .* passed over/,
    );
    assert.match(await page.title(), /^#2 in line · Contribute · /, 'the tab says where the contributor stands');
    // In line, before any acceptance, the page's receipts already hold the signed join.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-receipts-so-far')]);
    const soFar = JSON.parse(await readFile((await download.path())!, 'utf8')) as {
      receipts: unknown[];
      steps: Array<{ body: string; signature: string }>;
    };
    assert.equal(soFar.receipts.length, 0, 'no acceptance yet');
    assert.ok(
      soFar.steps.some((step) => {
        const body = JSON.parse(step.body) as { step?: string; circuit?: string; position?: number };
        return body.step === 'join' && body.circuit === 'register' && body.position === 2;
      }),
      `a join receipt among ${soFar.steps.map((step) => step.body).join(', ')}`,
    );
    await screenshot(page, 'terminal-01-page-second-in-line');

    coordinator.phase.set('open', Date.now());
    const { code } = await terminal.exited;
    const output = terminal.output();
    assert.equal(code, 0, output);
    const accepted = new Map<string, { index: number; hash: string }>();
    for (const circuit of CIRCUITS) {
      const match = new RegExp(`^${circuit} #(\\d+) contribution hash ([0-9a-f]{128})$`, 'm').exec(output);
      assert.ok(match, `no accepted line for ${circuit}:\n${output}`);
      accepted.set(circuit, { index: Number(match[1]), hash: match[2]! });
    }
    assert.ok(
      [...accepted.values()].every((a) => a.index === 1),
      'the terminal was first on every circuit',
    );
    assert.match(output, /done: 9 circuits accepted/);

    // The receipts file is /api/me/receipts's answer: nine receipts signed with the published key.
    const { receiptPublicKey } = (await (await fetch(`${coordinator.url}/api/ceremony`)).json()) as {
      receiptPublicKey: string;
    };
    const saved = JSON.parse(await readFile(receiptsFile, 'utf8')) as {
      receipts: Array<{ body: string; signature: string }>;
    };
    assert.equal(saved.receipts.length, CIRCUITS.length);
    for (const receipt of saved.receipts) {
      assert.equal(verifyReceipt(receipt, receiptPublicKey), true);
      const body = JSON.parse(receipt.body) as { circuit: string; contributor: string; contributionHash: string };
      assert.equal(body.contributor, 'terminal-tess');
      assert.equal(body.contributionHash, accepted.get(body.circuit)?.hash);
    }

    // The page waited behind the terminal and then took its own turn. Next in line (waiting@1) lasts
    // only while the terminal's turn on register runs, under a second with these keys, so the page
    // shows it only when one of its polls (one a second) lands in it: not asserted. The chain below
    // says who went first.
    await page.waitForSelector('#circuits tr[data-circuit="register"][data-status="accepted"]', { timeout: 120_000 });
    await screenshot(page, 'terminal-02-page-register-accepted');
    const seen = (await statusesSeen(page)).register!;
    const lastWaiting = Math.max(...seen.map((s, i) => (s.startsWith('waiting@') ? i : -1)));
    assert.ok(seen.includes('waiting@2'), `the page was second in line: ${seen}`);
    assert.ok(
      lastWaiting >= 0 && lastWaiting < seen.findIndex((s) => s.startsWith('accepted')),
      `waited before its turn: ${seen}`,
    );
    const chain = (await (await fetch(`${coordinator.url}/api/ceremony`)).json()) as {
      circuits: Array<{ name: string; chain: Array<{ index: number; contributor: string | null }> }>;
    };
    const register = chain.circuits.find((c) => c.name === 'register')!.chain;
    assert.deepEqual(
      register.map((e) => e.contributor),
      [null, 'terminal-tess', 'page-paul'],
    );
  },
);
