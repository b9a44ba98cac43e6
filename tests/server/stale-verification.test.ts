/**
 * A verification result for a contribution that is no longer next (the head moved while the job
 * waited in Redis) is discarded: the head it did not extend stays, nothing is committed twice,
 * the upload is deleted, and the contributor is told and put back in the queue.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { randomBytes } from 'node:crypto';
import { commitPreverifiedContribution } from '../../core/ceremony/extend-chain.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { hashFile } from '../../core/crypto/file-hash.ts';
import { contributeFast } from '../../core/kernel/contribute-fast.ts';

let coordinator: TestCoordinator;
let dataDir: string;

before(async () => {
  coordinator = await startTestCoordinator({ redis: true, tickIntervalMs: 100 });
  dataDir = coordinator.dataDir;
});

after(() => coordinator?.close());

test('a verified contribution whose head moved meanwhile is discarded, not committed', async () => {
  const alice = await ContributorClient.awaitingVerdict(coordinator.url, 'alice'); // no worker yet

  // The head moves to 1 while the job waits: a link committed as the coordinator commits a verified
  // one (a local `ceremony contribute` is refused on a served folder: tests/core/outside-queue-log.test.ts).
  const moved = path.join(dataDir, 'offline-contribution.zkey');
  const made = await contributeFast(
    (await openCeremony(dataDir)).paths.zkeyPath('register', 0),
    moved,
    'offline-contributor',
    randomBytes(32).toString('hex'),
  );
  await commitPreverifiedContribution(dataDir, 'register', {
    candidatePath: moved,
    headIndex: 0,
    fileHash: await hashFile(moved),
    contributionHash: made.hash,
    contributor: 'offline-contributor',
  });
  await coordinator.startWorker();

  const me = await alice.waitFor(
    (m) => m.contributions.some((c) => c.status === 'discarded'),
    'the discarded verdict',
    60_000,
  );
  assert.equal(me.contributions[0]!.code, 'contribution.not_next');
  assert.ok(!JSON.stringify(me).includes(dataDir), 'the verdict names no server path');
  assert.notEqual(me.status.circuits[0]!.state, 'accepted');
  const state = await openCeremony(dataDir);
  assert.equal(state.chains.get('register')!.headIndex, 1);
  assert.deepEqual(
    state.chains.get('register')!.contributions.map((c) => c.contributor),
    ['offline-contributor'],
  );
  // The discarded upload (tens to hundreds of MB in production) does not stay on disk.
  assert.deepEqual(await readdir(path.join(dataDir, 'uploads', 'register')), []);
  // alice is back in the queue and gets a new turn on the new head.
  await alice.waitFor((m) => m.status.circuits[0]!.state === 'turn', 'a new turn');
});
