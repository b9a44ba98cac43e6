/**
 * A coordinator restart costs a terminal contributor nothing: `ceremony contribute --coordinator`
 * (the real command) takes a turn while its coordinator (`ceremony serve`, a process group of its
 * own, the embedded verifier inside) is killed with SIGKILL at each step of the turn and started
 * again on the same folder: the first answer of the ceremony, the sign-in and the join with their
 * answers lost, a heartbeat, the head's inputs cut off mid-download, the upload's creation answer
 * lost, the upload cut off mid-body, its last PATCH answered but the answer lost (the contribution
 * being verified), a poll while it is verified, and the last request of all, GET /api/me/receipts,
 * both before the coordinator sees it and with its answer lost. The run ends accepted, with its
 * receipt saved and valid, one lobby entry, one link in the transcript.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { newCeremonyDir, REGISTER_ONLY, REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { startGroup, stopAllGroups } from '../helpers/process-group.ts';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process.ts';
import { startRestartProxy, type KillPoint, type RestartProxy } from '../helpers/restart-proxy.ts';
import { CEREMONY_BIN } from '../helpers/run-cli.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { verifyReceipt } from '../../server/contributions/receipt-signer.ts';

let dataDir: string;
let scratch: string;
let serve: ServeProcess;
let proxy: RestartProxy;

/** How long the contribution may run before the test ends it and says what happened. */
const WATCHDOG_MS = 300_000;

/** Set once the upload's last PATCH was answered (the contribution is then being verified). */
let uploadFinished = false;

const POINTS: KillPoint[] = [
  { label: 'ceremony (before)', method: 'GET', path: /^\/api\/ceremony$/, at: 'request' },
  { label: 'sign-in (answer lost)', method: 'POST', path: /^\/auth\/demo$/, at: 'response' },
  { label: 'join (answer lost)', method: 'POST', path: /^\/api\/me\/join$/, at: 'response' },
  { label: 'heartbeat (before)', method: 'POST', path: /^\/api\/circuits\/register\/heartbeat$/, at: 'request' },
  {
    label: 'head inputs (mid-download)',
    method: 'GET',
    path: /^\/api\/circuits\/register\/contribution-inputs\/\d+$/,
    at: 'response',
    atByte: 2048,
  },
  {
    label: 'upload creation (answer lost)',
    method: 'POST',
    path: /^\/api\/circuits\/register\/contributions$/,
    at: 'response',
  },
  {
    label: 'upload (mid-body)',
    method: 'PATCH',
    path: /^\/api\/circuits\/register\/contributions\//,
    at: 'body',
    atByte: 4096,
  },
  {
    label: 'last PATCH (answer lost, verifying)',
    method: 'PATCH',
    path: /^\/api\/circuits\/register\/contributions\//,
    at: 'response',
    when: ({ response }) => (uploadFinished = response?.headers['x-contribution-id'] !== undefined),
  },
  {
    label: 'poll while verified (before)',
    method: 'GET',
    path: /^\/api\/me$/,
    at: 'request',
    when: () => uploadFinished,
  },
  { label: 'receipts (before)', method: 'GET', path: /^\/api\/me\/receipts$/, at: 'request' },
  { label: 'receipts (answer lost)', method: 'GET', path: /^\/api\/me\/receipts$/, at: 'response' },
];

before(async () => {
  dataDir = await newCeremonyDir({ configOverrides: REGISTER_ONLY, init: true });
  scratch = await mkdtemp(path.join(tmpdir(), 'restarts-'));
  serve = await startServeProcess({ dataDir, env: { RATE_LIMIT_SIGN_IN: '1000' } });
  proxy = await startRestartProxy({
    target: serve.url,
    points: POINTS,
    crash: () => serve.kill(),
    restart: () => serve.start(),
    // The kill resets the client's connection; while the coordinator is down, requests get the 502
    // page a gateway in front of it answers.
    whileDown: 502,
  });
});

after(async () => {
  await stopAllGroups();
  await proxy?.close();
  await serve?.stop();
  await cleanUp(dataDir, scratch);
});

test(
  'kill -9 of the coordinator at each step of a turn, the last request included: the contributor finishes with ' +
    'its receipt saved',
  { timeout: 600_000 },
  async () => {
    const receiptsFile = path.join(scratch, 'receipts.json');
    const run = startGroup(
      process.execPath,
      [CEREMONY_BIN, 'contribute', '--coordinator', proxy.url, '--demo', 'rita', '--receipts', receiptsFile],
      { cwd: REPO_ROOT, env: { ...process.env, TMPDIR: scratch }, label: 'ceremony contribute' },
    );
    const diagnosis = (output: string): string =>
      `${output}\n--- kill points fired ---\n${proxy.fired.join('\n')}\n${proxy.failures.join('\n')}` +
      `\n--- requests ---\n${proxy.requests.join('\n')}\n--- coordinator ---\n${serve.output().slice(-20_000)}`;
    // The run takes well under a minute; a coordinator that stays down would have the client retry
    // for its whole 10 minutes: end it sooner, saying what the proxy and the coordinator saw.
    let watchdog: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      run.exited,
      new Promise<'hung'>((resolve) => (watchdog = setTimeout(() => resolve('hung'), WATCHDOG_MS))),
    ]).finally(() => clearTimeout(watchdog));
    if (finished === 'hung') {
      await run.stop('SIGKILL');
      assert.fail(`the contribution did not end within ${WATCHDOG_MS} ms:\n${diagnosis(run.output())}`);
    }
    const output = run.output();
    assert.equal(finished.code, 0, diagnosis(output));
    // A streamed turn creates its upload while the head's inputs arrive: those two points may fire in
    // either order (after a kill, the retried download may come after the creation, or before).
    const overlapping = new Set(['head inputs (mid-download)', 'upload creation (answer lost)']);
    const turnOrder = (labels: readonly string[]) =>
      labels.map((label) => (overlapping.has(label) ? 'head inputs | upload creation' : label));
    assert.deepEqual(
      turnOrder(proxy.fired),
      turnOrder(POINTS.map((p) => p.label)),
      `every kill point fired, in the order of a turn; requests: ${proxy.requests.join(', ')}`,
    );
    assert.deepEqual(
      new Set(proxy.fired),
      new Set(POINTS.map((p) => p.label)),
      'each point fired, the two that may swap included',
    );
    assert.match(output, /the coordinator does not answer \(.*\); this command keeps trying for up to 10 minutes/);
    assert.match(output, /the coordinator answers again/);
    // A last PATCH whose answer was lost is an upload made, never "a turn ended before the upload".
    assert.doesNotMatch(output, /turn ended before the upload/);
    const [, index, hash] = /^register #(\d+) contribution hash ([0-9a-f]{128})$/m.exec(output) ?? [];
    assert.equal(index, '1', output);
    assert.match(output, /saved 1 signed receipt to .*receipts\.json \(each signature checked/);

    // One link, the one computed here, and a valid receipt for it.
    const state = await openCeremony(dataDir);
    const links = state.chains.get('register')!.contributions;
    assert.deepEqual(
      links.map((l) => [l.contributor, l.contributionHash]),
      [['rita', hash]],
    );
    const saved = JSON.parse(await readFile(receiptsFile, 'utf8')) as {
      receipts: Array<{ body: string; signature: string }>;
    };
    assert.equal(saved.receipts.length, 1);
    const rita = new ContributorClient(serve.url);
    await rita.signInDemo('rita');
    const { receiptPublicKey } = await rita.request<{ receiptPublicKey: string }>('GET', '/api/ceremony');
    assert.equal(verifyReceipt(saved.receipts[0]!, receiptPublicKey), true);
    assert.equal((JSON.parse(saved.receipts[0]!.body) as { contributionHash: string }).contributionHash, hash);
    // One accepted contribution, whatever was sent twice.
    const me = await rita.me();
    assert.deepEqual(
      me.contributions.map((c) => c.status),
      ['accepted'],
    );
  },
);
