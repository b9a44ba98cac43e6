/**
 * A serving coordinator follows its transcript when commands on the data folder change it
 * (server/transcript-phase-follower.ts): the beacon announced with `ceremony announce-beacon`'s
 * library call while the ceremony is open closes it within a tick and ends the turn under way,
 * its contributor told why (before, turns went on being granted and every commit was refused);
 * `ceremony finalise` on the folder then finalises the phase. The console's overview shows the
 * announcement, and a coordinator with no BEACON_RPC_URL refuses to announce and says why.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { newCeremonyDir, REGISTER_ONLY } from '../fixtures/ceremony-fixture.ts';
import { startAnvil, type AnvilNode } from '../helpers/anvil.ts';
import { ContributorClient, HttpError } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { announceBeacon } from '../../core/finalise/beacon-announcement.ts';
import { finaliseCeremony } from '../../core/finalise/finalise-ceremony.ts';
import type { AdminOverview } from '../../core/coordinator-api/api-types.ts';
import type { CeremonyPhase } from '../../core/ceremony/ceremony-phases.ts';

const TOKEN = 'coordinator-token-for-the-transcript-follower';
let anvil: AnvilNode;
let dataDir: string;
let coordinator: TestCoordinator;

before(async () => {
  anvil = await startAnvil();
  dataDir = await newCeremonyDir({ configOverrides: REGISTER_ONLY, init: true });
  // No BEACON_RPC_URL: the console cannot announce; the command on the folder can.
  coordinator = await startTestCoordinator({
    dataDir,
    env: { COORDINATOR_TOKEN: TOKEN, PRESENCE_MS: '0', TAKE_TURN_MS: '0' },
    tickIntervalMs: 100,
  });
  // The chain's minimum, so it may be announced; through the queue, so the finalisation's check of
  // the queue log (its audit) passes.
  await ContributorClient.contributed(coordinator.url, 'alice', 'register');
});

after(async () => {
  await coordinator?.close();
  await anvil?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

async function phaseBecomes(phase: CeremonyPhase, what: string): Promise<void> {
  const started = Date.now();
  while (coordinator.phase.get() !== phase) {
    if (Date.now() - started > 10_000) assert.fail(`${what}: the phase is still ${coordinator.phase.get()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('without BEACON_RPC_URL the console may not announce, and its overview says so', async () => {
  const admin = new ContributorClient(coordinator.url);
  await admin.signInCoordinator(TOKEN);
  const overview = await admin.request<AdminOverview>('GET', '/api/admin/overview');
  assert.equal(overview.beaconFromChain, false);
  assert.equal(overview.beaconAnnouncement, undefined);
  await admin.request('POST', '/api/admin/phase', { phase: 'closed' });
  await assert.rejects(
    admin.request('POST', '/api/admin/beacon/announce', { chainId: 31337, blockNumber: 99, iterations: 10 }),
    (error) => {
      assert.ok(error instanceof HttpError);
      assert.equal(error.status, 400);
      assert.equal(error.code, 'request.invalid');
      assert.match(error.message, /no BEACON_RPC_URL.*`ceremony announce-beacon`/);
      return true;
    },
  );
  await admin.request('POST', '/api/admin/phase', { phase: 'open' });
});

test('an announcement made on the folder closes the open ceremony and ends the turn under way', async () => {
  const bob = new ContributorClient(coordinator.url);
  await bob.signInDemo('bob');
  await bob.join();
  await bob.waitForState('register', 'turn', "bob's turn");

  const blockNumber = (await anvil.latestBlock()) + 8;
  const { entry } = await announceBeacon(
    dataDir,
    { chainId: 31337, blockNumber, iterationsExp: 10 },
    { rpcUrl: anvil.rpcUrl },
  );
  await phaseBecomes('closed', 'the announcement');
  const me = await bob.waitFor((view) => view.status.circuits[0]?.state !== 'turn', 'the end of bob’s turn');
  assert.equal(me.status.removed?.circuit, 'register');
  assert.match(me.status.removed!.message, /the beacon was announced, so contributions are closed for good/);

  const admin = new ContributorClient(coordinator.url);
  await admin.signInCoordinator(TOKEN);
  const overview = await admin.request<AdminOverview>('GET', '/api/admin/overview');
  assert.deepEqual(overview.activeTurns, []);
  const { chainId, iterationsExp, time, seq, hash } = entry;
  assert.deepEqual(overview.beaconAnnouncement, { chainId, blockNumber, iterationsExp, time, seq, hash });
  await assert.rejects(admin.request('POST', '/api/admin/phase', { phase: 'open' }), /contributions are closed/);

  // `ceremony finalise` on the folder, the block mined and confirmed: the coordinator follows.
  await anvil.mine(10);
  await finaliseCeremony(dataDir, { rpcUrl: anvil.rpcUrl, confirmations: 2 });
  await phaseBecomes('finalised', 'the finalisation on the folder');
});
