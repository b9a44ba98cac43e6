/**
 * The contributor driver (client/contributor-driver.ts) against a real coordinator (in-process,
 * embedded verification), each contributor's bytes moved by the terminal's FileTurn: in line behind
 * another, a turn taken on standby from one who never takes it, and the terminal (`ceremony
 * contribute --coordinator URL`, a process) and the page's side of the protocol (the page's options:
 * joined when asked, polls during turns) in one queue. The page's own words while in line are
 * checked in Chromium (tests/browser/contribute-in-browser.test.ts).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ContributorDriver } from '../../client/contributor-driver.ts';
import { coordinatorApi, type DriverTurn } from '../../client/contributor-driver-parts.ts';
import type { CeremonyView, MeView } from '../../core/coordinator-api/api-types.ts';
import { CoordinatorClient } from '../../cli/contributor/coordinator-client.ts';
import { FileTurn } from '../../cli/contributor/file-turn.ts';
import { contributionEntropy } from '../../core/crypto/contribution-entropy.ts';
import { verifyReceipt } from '../../server/contributions/receipt-signer.ts';
import { REPO_ROOT, TWO_CIRCUITS } from '../fixtures/ceremony-fixture.ts';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { startGroup, stopAllGroups } from '../helpers/process-group.ts';
import { startTestCoordinator, type ServerEnv } from '../helpers/test-coordinator.ts';

/**
 * A real coordinator (`env`) whose first circuit's turn is granted to `aheadName`, and a terminal
 * client signed in as `name` with its FileTurn; both stopped and cleaned up when the test ends.
 */
async function behindAGrantee(t: TestContext, aheadName: string, name: string, env?: ServerEnv) {
  // One queue is the point: a ceremony of its circuit alone, without eight chains to make and prepare.
  const coordinator = await startTestCoordinator({ ...(env ? { env } : {}), ceremony: { circuits: ['register'] } });
  const workDir = await mkdtemp(path.join(tmpdir(), 'contributor-driver-'));
  t.after(async () => {
    await coordinator.close();
    await rm(workDir, { recursive: true, force: true });
  });
  const ahead = new ContributorClient(coordinator.url);
  await ahead.signInDemo(aheadName);
  const ceremony = await ahead.request<CeremonyView>('GET', '/api/ceremony');
  const circuit = ceremony.circuits[0]!.name;
  await ahead.request('POST', '/api/me/join', { circuits: [circuit] });
  coordinator.service.tick();
  assert.equal((await ahead.progress(circuit)).state, 'turn', 'the one ahead holds the turn');
  const client = new CoordinatorClient(coordinator.url, { rideOutRestarts: {} });
  await client.signInDemo(name);
  const protocol = new FileTurn({ client, workDir, transfer: 'delta', workers: 1 });
  /** The terminal's driver options on this client, joined to `circuit` (api and view aside). */
  const terminalOptions = (driver: () => ContributorDriver) => ({
    turn: async (turn: DriverTurn) => {
      const result = await protocol.takeTurn({ ...turn, name, entropy: contributionEntropy, progress: () => {} });
      driver().rememberHash(turn.circuit, result.contributionHash);
    },
    joinAtStart: { circuits: [circuit], everyCircuit: false },
    steady: { signInAgain: async () => void (await client.signInDemo(name)) },
    pollDuringTurns: false,
    confirmLostTurns: true,
    turnRetryPauseMs: 2000,
    ready: protocol.prepare(),
  });
  return { coordinator, ahead, circuit, client, terminalOptions };
}

/** The circuit's progress on the coordinator is accepted, with the hash the driver computed. */
async function assertAcceptedHere(client: CoordinatorClient, driver: ContributorDriver, circuit: string) {
  const me = await client.request<MeView>('GET', '/api/me');
  const progress = me.status.circuits.find((c) => c.circuit === circuit);
  assert.ok(progress?.state === 'accepted', 'accepted on the coordinator');
  assert.equal(progress.contributionHash, driver.localHash(circuit), 'the hash computed here');
}

test('a real coordinator: joined, in line behind another, the turn taken when it leaves, accepted', async (t) => {
  const { coordinator, ahead, circuit, client, terminalOptions } = await behindAGrantee(t, 'ahead', 'driven');
  const verdicts: string[] = [];
  const waiting: number[] = [];
  const driver: ContributorDriver = new ContributorDriver({
    ...terminalOptions(() => driver),
    api: coordinatorApi(client),
    view: {
      answered: (me) => {
        for (const c of me.status.circuits) if (c.state === 'waiting') waiting.push(c.position);
      },
      verdict: (contribution) => verdicts.push(contribution.status),
    },
  });
  const run = driver.run();
  t.after(() => driver.stop());
  for (const started = Date.now(); waiting.length === 0; await new Promise((r) => setTimeout(r, 50)))
    assert.ok(Date.now() - started < 10_000, 'the driver joined and waits in line');
  assert.equal(waiting[0], 1, 'next in line');
  await ahead.request('POST', '/api/me/leave');
  coordinator.service.tick();
  await run;
  assert.deepEqual(verdicts, ['accepted']);
  await assertAcceptedHere(client, driver, circuit);
});

test('a real coordinator: the turn of one who never takes it is taken on standby, held polls and all', async (t) => {
  // The offer reaches the first behind the grantee a priority after the grant: long enough for the
  // set-up to join first and hold its polls (at 500 ms, a slow set-up found the offer in its join's answer).
  const env = { TAKE_TURN_MS: '30000', TAKE_PRIORITY_MS: '3000', PRESENCE_MS: '60000' };
  const { ahead: idle, circuit, client, terminalOptions } = await behindAGrantee(t, 'never-takes', 'standby', env);
  const api = coordinatorApi(client);
  const turnWaits: number[] = [];
  const started: boolean[] = [];
  const failures: string[] = [];
  const driver: ContributorDriver = new ContributorDriver({
    ...terminalOptions(() => driver),
    api: { ...api, me: (resend, hold) => (hold?.turnWaitMs && turnWaits.push(hold.turnWaitMs), api.me(resend, hold)) },
    holdPollsForVerdicts: true,
    view: {
      turnStarting: (_circuit, standby) => started.push(standby),
      turnFailed: (_circuit, error) => failures.push(error.code),
    },
  });
  t.after(() => driver.stop());
  await driver.run();
  assert.deepEqual(started, [true], 'one turn, taken on standby');
  assert.deepEqual(failures, []);
  assert.ok(turnWaits.length > 0 && turnWaits.every((ms) => ms === 10_000), 'next in line, its polls were held');
  await assertAcceptedHere(client, driver, circuit);
  const idleState = (await idle.progress(circuit)).state;
  assert.ok(
    idleState === 'waiting' || idleState === 'turn',
    `the one who never took it is back in line (${idleState})`,
  );
});

/** The page's side of the protocol as `name` on `client`, with the page's options; its bytes moved by FileTurn. */
async function pageDriver(client: CoordinatorClient, name: string, workDir: string, view: DriverOptionsView) {
  const protocol = new FileTurn({ client, workDir, transfer: 'delta', workers: 1 });
  const driver: ContributorDriver = new ContributorDriver({
    api: coordinatorApi(client),
    turn: async (turn: DriverTurn) => {
      const result = await protocol.takeTurn({ ...turn, name, entropy: contributionEntropy, progress: () => {} });
      driver.rememberHash(turn.circuit, result.contributionHash);
    },
    pollDuringTurns: true,
    confirmLostTurns: false,
    turnRetryPauseMs: 5000,
    heartbeatRetryMs: 5000,
    ready: protocol.prepare(),
    view,
  });
  return driver;
}

type DriverOptionsView = ConstructorParameters<typeof ContributorDriver>[0]['view'];

test(
  'the terminal and the page in one queue: the terminal first on every circuit, then the page on its turn',
  { timeout: 300_000 },
  async (t) => {
    const env = { RATE_LIMIT_UPLOAD_CREATION: '1000' };
    const twoCircuits = { circuits: TWO_CIRCUITS };
    // Not open yet: nobody gets a turn until both have joined, so the terminal is first in every line.
    // Two circuits: the terminal first in every line and the page's turn after it on the first are
    // shown by two as by nine, for two ninths of the contributions and verifications.
    const coordinator = await startTestCoordinator({ open: false, tickIntervalMs: 100, env, ceremony: twoCircuits });
    const workDir = await mkdtemp(path.join(tmpdir(), 'terminal-and-page-'));
    t.after(async () => {
      await stopAllGroups();
      await coordinator.close();
      await rm(workDir, { recursive: true, force: true });
    });
    const receiptsFile = path.join(workDir, 'receipts.json');
    const cli = [path.join(REPO_ROOT, 'bin', 'ceremony.js'), 'contribute', '--coordinator', coordinator.url];
    const terminal = startGroup(process.execPath, [...cli, '--demo', 'terminal-tess', '--receipts', receiptsFile], {
      cwd: REPO_ROOT,
      env: { ...process.env, TMPDIR: workDir },
      label: 'ceremony contribute --coordinator',
    });
    await terminal.waitFor(
      /register: waiting: next in line · no turn starts until the coordinator opens the ceremony/,
      60_000,
    );
    assert.match(
      terminal.output(),
      /You are in line; keep this command running: .* you keep your place but are passed over/,
    );

    const client = new CoordinatorClient(coordinator.url, { rideOutRestarts: {} });
    await client.signInDemo('page-paul');
    /** The page's register row as each answer showed it (state@position while waiting). */
    const seen: string[] = [];
    const beats = new Set<string>();
    let registerAccepted!: () => void;
    const accepted = new Promise<void>((resolve) => (registerAccepted = resolve));
    const page = await pageDriver(client, 'page-paul', await mkdtemp(path.join(workDir, 'page-')), {
      answered: (me) => {
        const register = me.status.circuits.find((c) => c.circuit === 'register');
        if (!register) return;
        seen.push(register.state === 'waiting' ? `waiting@${register.position}` : register.state);
        if (register.state === 'accepted') registerAccepted();
      },
      heartbeat: (circuit) => beats.add(circuit),
    });
    const run = page.run().catch((error: unknown) => error);
    t.after(() => page.stop());
    await page.join();
    assert.equal(seen.at(-1), 'waiting@2', 'the page joined second in line, behind the terminal');

    coordinator.phase.set('open', Date.now());
    const { code } = await terminal.exited;
    const output = terminal.output();
    assert.equal(code, 0, output);
    const hashes = new Map<string, string>();
    for (const circuit of TWO_CIRCUITS) {
      const match = new RegExp(`^${circuit} #(\\d+) contribution hash ([0-9a-f]{128})$`, 'm').exec(output);
      assert.ok(match, `no accepted line for ${circuit}:\n${output}`);
      assert.equal(match[1], '1', `the terminal was first on ${circuit}`);
      hashes.set(circuit, match[2]!);
    }
    assert.match(output, new RegExp(`done: ${TWO_CIRCUITS.length} circuits accepted`));
    // The receipts file is /api/me/receipts's answer: nine receipts signed with the published key.
    const { receiptPublicKey } = await client.get<CeremonyView & { receiptPublicKey: string }>('/api/ceremony');
    const saved = JSON.parse(await readFile(receiptsFile, 'utf8')) as {
      receipts: Array<{ body: string; signature: string }>;
    };
    assert.equal(saved.receipts.length, TWO_CIRCUITS.length);
    for (const receipt of saved.receipts) {
      assert.equal(verifyReceipt(receipt, receiptPublicKey), true);
      const body = JSON.parse(receipt.body) as { circuit: string; contributor: string; contributionHash: string };
      assert.equal(body.contributor, 'terminal-tess');
      assert.equal(body.contributionHash, hashes.get(body.circuit));
    }

    await accepted;
    page.stop();
    await run;
    const lastWaiting = Math.max(...seen.map((s, i) => (s.startsWith('waiting@') ? i : -1)));
    assert.ok(lastWaiting >= 0 && lastWaiting < seen.indexOf('accepted'), `waited before its turn: ${seen}`);
    assert.ok(beats.has('register'), 'the page beat during its turn');
    await assertAcceptedHere(client, page, 'register');
    const ceremony = await client.get<CeremonyView>('/api/ceremony');
    const chain = ceremony.circuits.find((c) => c.name === 'register')!.chain;
    assert.deepEqual(
      chain.map((e) => e.contributor),
      [null, 'terminal-tess', 'page-paul'],
    );
  },
);
