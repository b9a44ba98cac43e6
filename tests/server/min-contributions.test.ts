/**
 * ceremony.json's minContributions at the coordinator, over HTTP against a real coordinator: the
 * console's finalise (POST /api/admin/finalise) is refused with finalise.too_few_contributions
 * while a chain has fewer, naming each short circuit, before the ceremony enters `finalising`;
 * the overview gives the console the minimum.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { newCeremonyDir, TEST_BEACON, TEST_BEACON_ITERATIONS } from '../fixtures/ceremony-fixture.ts';
import { ContributorClient, HttpError } from '../helpers/contributor-client.ts';
import { initCeremony } from '../../core/ceremony/init-ceremony.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { loadServerConfig } from '../../server/config/server-config.ts';
import { startCoordinator, type RunningCoordinator } from '../../server/start-coordinator.ts';

const TOKEN = 'coordinator-token-for-min-contributions';
let coordinator: RunningCoordinator;
let dataDir: string;

before(async () => {
  dataDir = await newCeremonyDir({ configOverrides: { minContributions: 2 } });
  await initCeremony(dataDir);
  coordinator = await startCoordinator(
    loadServerConfig({ CEREMONY_DATA: dataDir, PORT: '0', OPEN_ON_START: 'true', COORDINATOR_TOKEN: TOKEN }),
    {
      log: { info: () => {}, warn: () => {} },
    },
  );
});

after(async () => {
  await coordinator?.close();
  await releaseBn128();
  await rm(dataDir, { recursive: true, force: true });
});

test('finalise is refused below minContributions, naming every short circuit, and the phase stays closed', async () => {
  const admin = new ContributorClient(coordinator.url);
  await admin.signInCoordinator(TOKEN);
  const overview = await admin.request<{
    minContributions: number;
    heads: Array<{ circuit: string; headIndex: number }>;
  }>('GET', '/api/admin/overview');
  assert.equal(overview.minContributions, 2);
  assert.ok(overview.heads.every((head) => head.headIndex === 0));
  await admin.request('POST', '/api/admin/phase', { phase: 'closed' });
  await assert.rejects(
    admin.request('POST', '/api/admin/finalise', { beacon: TEST_BEACON, iterations: TEST_BEACON_ITERATIONS }),
    (error: unknown) => {
      assert.ok(error instanceof HttpError, String(error));
      assert.equal(error.status, 409);
      assert.equal(error.code, 'finalise.too_few_contributions');
      assert.match(
        error.message,
        new RegExp(
          'requires at least 2 contributions per circuit before finalising; too ' +
            'few for: register \\(0\\), treeUpdate \\(0\\), transact21 \\(0\\),.* transact84 \\(0\\)$',
        ),
      );
      return true;
    },
  );
  assert.equal(coordinator.phase.get(), 'closed');
  assert.equal(coordinator.phase.finalisationInterruptedAt(), undefined);
});
