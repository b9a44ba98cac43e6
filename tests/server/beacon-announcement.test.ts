/**
 * The beacon announced and applied from the console, against a real coordinator and a real chain
 * (anvil): POST /api/admin/beacon/announce needs the ceremony closed, checks the block is ahead
 * over BEACON_RPC_URL and closes contributions for good (reopening is refused); POST
 * /api/admin/finalise with no beacon takes the announced block's hash once it has
 * BEACON_CONFIRMATIONS, and its refusals never name the endpoint (its URL may carry an API key).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { newCeremonyDir, REGISTER_ONLY } from '../fixtures/ceremony-fixture.ts';
import { startAnvil, type AnvilNode } from '../helpers/anvil.ts';
import { ContributorClient, HttpError } from '../helpers/contributor-client.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import type { AdminOverview, BeaconAnnounceResult } from '../../core/coordinator-api/api-types.ts';
import { loadServerConfig } from '../../server/config/server-config.ts';
import { startCoordinator, type RunningCoordinator } from '../../server/start-coordinator.ts';

const TOKEN = 'coordinator-token-for-beacon-announcement';
let coordinator: RunningCoordinator;
let anvil: AnvilNode;
let dataDir: string;

before(async () => {
  anvil = await startAnvil();
  dataDir = await newCeremonyDir({ configOverrides: REGISTER_ONLY, init: true });
  coordinator = await startCoordinator(
    loadServerConfig({
      CEREMONY_DATA: dataDir,
      PORT: '0',
      OPEN_ON_START: 'true',
      COORDINATOR_TOKEN: TOKEN,
      BEACON_RPC_URL: anvil.rpcUrl,
      BEACON_CONFIRMATIONS: '2',
    }),
    { log: { info: () => {}, warn: () => {} } },
  );
  // The chain's minimum, through the queue: the finalisation checks the queue log as the audit will.
  await ContributorClient.contributed(coordinator.url, 'alice', 'register');
});

after(async () => {
  await coordinator?.close();
  await anvil?.stop();
  await releaseBn128();
  await rm(dataDir, { recursive: true, force: true });
});

function refused(status: number, code: string, pattern?: RegExp): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof HttpError, String(error));
    assert.equal(error.status, status, error.message);
    assert.equal(error.code, code, error.message);
    if (pattern) assert.match(error.message, pattern);
    assert.ok(!error.message.includes(anvil.rpcUrl) && !error.message.includes('127.0.0.1'), error.message);
    return true;
  };
}

test('the console announces a future block, cannot reopen, and finalises with its hash once confirmed', async () => {
  const admin = new ContributorClient(coordinator.url);
  await admin.signInCoordinator(TOKEN);
  const blockNumber = (await anvil.latestBlock()) + 8;
  const announce = { chainId: 31337, blockNumber, iterations: 10 };

  await assert.rejects(
    admin.request('POST', '/api/admin/beacon/announce', announce),
    refused(409, 'ceremony.not_closed', /close the ceremony before announcing the beacon/),
  );
  await admin.request('POST', '/api/admin/phase', { phase: 'closed' });
  await assert.rejects(
    admin.request('POST', '/api/admin/beacon/announce', { ...announce, blockNumber: 0 }),
    refused(409, 'beacon.block_too_soon', /already mined/),
  );
  const announced = await admin.request<BeaconAnnounceResult>('POST', '/api/admin/beacon/announce', announce);
  const written = (await openCeremony(dataDir)).beaconAnnouncement!;
  const { seq, hash, time } = written;
  assert.deepEqual(announced.announcement, { chainId: 31337, blockNumber, iterationsExp: 10, time, seq, hash });
  assert.ok(announced.latestBlock < blockNumber);
  const overview = await admin.request<AdminOverview>('GET', '/api/admin/overview');
  assert.equal(overview.beaconFromChain, true);
  assert.deepEqual(overview.beaconAnnouncement, announced.announcement);
  await assert.rejects(
    admin.request('POST', '/api/admin/phase', { phase: 'open' }),
    refused(409, 'ceremony.beacon_announced', /contributions are closed/),
  );
  assert.equal(coordinator.phase.get(), 'closed');

  await assert.rejects(
    admin.request('POST', '/api/admin/finalise', {}),
    refused(409, 'beacon.block_not_final', new RegExp(`block ${blockNumber} of chain 31337 is not mined yet`)),
  );
  assert.equal(coordinator.phase.get(), 'closed', 'a refused finalisation leaves the phase closed');

  await anvil.mine(10);
  await admin.request('POST', '/api/admin/finalise', {});
  assert.equal(coordinator.phase.get(), 'finalised');
  const block = await anvil.rpc<{ hash: string }>('eth_getBlockByNumber', [`0x${blockNumber.toString(16)}`, false]);
  const state = await openCeremony(dataDir);
  assert.equal(state.chains.get('register')!.beacon!.beacon, block.hash.slice(2));
});
