/**
 * What a restarted coordinator makes of a contribution it left `verifying` (the branches of the
 * start-up reconciliation that a crash mid-verification does not reach): one whose link reached the
 * transcript before the crash but whose verdict never reached SQLite is recorded as accepted, with
 * its signed receipt; one whose uploaded file is gone is an error the contributor sees, and they
 * are back in the queue for that circuit. Verification goes to a real Redis with no worker, so
 * nothing decides the contributions before the restart.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { newCeremonyDir } from '../fixtures/ceremony-fixture.ts';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { commitPreverifiedContribution } from '../../core/ceremony/extend-chain.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { verifyLinkFromHead } from '../../core/link-check/verify-link-from-head.ts';
import { ContributionStore, type ContributionRow } from '../../server/contributions/contribution-store.ts';
import { verifyReceipt } from '../../server/contributions/receipt-signer.ts';
import type { RunningCoordinator } from '../../server/start-coordinator.ts';

let redis: RedisServer;
let dataDir: string;
let coordinator: TestCoordinator | undefined;

/** A coordinator on the test's folder and Redis; its close() leaves both. */
async function start(): Promise<TestCoordinator> {
  coordinator = await startTestCoordinator({ dataDir, redis });
  return coordinator;
}

/** The same signed-in contributor (the session lives in SQLite) against the coordinator now running. */
function reconnect(client: ContributorClient, running: RunningCoordinator): ContributorClient {
  const again = new ContributorClient(running.url);
  again.cookie = client.cookie;
  again.csrfToken = client.csrfToken;
  return again;
}

/** Uploads a contribution on its turn and returns the row the coordinator left `verifying`. */
async function uploadAndLeaveVerifying(
  client: ContributorClient,
  running: RunningCoordinator,
  circuit: string,
): Promise<ContributionRow> {
  await client.waitFor(
    (me) => me.status.circuits.find((c) => c.circuit === circuit)?.state === 'turn',
    `a turn on ${circuit}`,
  );
  await client.upload(circuit, (await client.makeContribution(circuit)).file);
  const row = new ContributionStore(running.db).byStatus('verifying').find((r) => r.circuit === circuit);
  assert.ok(row, `no verifying contribution on ${circuit}`);
  return row;
}

before(async () => {
  redis = await startRedisServer();
  dataDir = await newCeremonyDir({ init: true });
});

after(async () => {
  await coordinator?.close();
  await redis?.stop();
  await cleanUp(dataDir);
});

test(
  'a link already in the transcript is accepted with its receipt; a lost ' + 'upload is an error and back in the queue',
  async () => {
    let running = await start();
    let alice = new ContributorClient(running.url);
    await alice.signInDemo('alice');
    await alice.join();

    // A crash after the transcript append and before the verdict reached SQLite.
    const committedRow = await uploadAndLeaveVerifying(alice, running, 'register');
    await running.close();
    const link = await verifyLinkFromHead(ceremonyPaths(dataDir).zkeyPath('register', 0), committedRow.candidatePath);
    await commitPreverifiedContribution(dataDir, 'register', {
      candidatePath: committedRow.candidatePath,
      headIndex: committedRow.headIndex,
      fileHash: committedRow.fileHash,
      contributionHash: link.contributionHash,
      contributor: committedRow.contributorName,
    });
    running = await start();
    alice = reconnect(alice, running);
    const me = await alice.me();
    const register = me.status.circuits.find((c) => c.circuit === 'register')!;
    assert.equal(register.state, 'accepted');
    assert.equal(register.state === 'accepted' && register.contributionHash, link.contributionHash);
    const { receipts } = await alice.request<{ receipts: Array<{ body: string; signature: string }> }>(
      'GET',
      '/api/me/receipts',
    );
    const { receiptPublicKey } = await alice.request<{ receiptPublicKey: string }>('GET', '/api/ceremony');
    assert.equal(receipts.length, 1, 'a receipt for the recovered contribution');
    assert.deepEqual(
      (({ circuit, index, contributionHash }) => ({ circuit, index, contributionHash }))(
        JSON.parse(receipts[0]!.body) as { circuit: string; index: number; contributionHash: string },
      ),
      { circuit: 'register', index: 1, contributionHash: link.contributionHash },
    );
    assert.ok(verifyReceipt(receipts[0]!, receiptPublicKey), 'the receipt verifies');

    // A crash that also lost the uploaded file.
    const lostRow = await uploadAndLeaveVerifying(alice, running, 'treeUpdate');
    await running.close();
    await rm(lostRow.candidatePath);
    running = await start();
    alice = reconnect(alice, running);
    const later = await alice.me();
    assert.equal(new ContributionStore(running.db).get(lostRow.id)!.status, 'error');
    assert.equal(later.status.lastRefusal?.code, 'verification.unavailable');
    assert.ok(
      ['waiting', 'turn'].includes(later.status.circuits.find((c) => c.circuit === 'treeUpdate')!.state),
      'back in the queue for treeUpdate',
    );
    assert.equal(
      later.status.circuits.find((c) => c.circuit === 'register')!.state,
      'accepted',
      'the recovered contribution stays accepted',
    );
  },
);
