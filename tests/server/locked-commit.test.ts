/**
 * A verified contribution whose commit finds the data folder locked by another live process (the
 * coordinator's own `ceremony contribute` on another circuit, say) is not thrown away: it stays
 * `verifying`, its upload kept, and is committed once the lock is released. A coordinator stopped while
 * such a commit waits to be tried again does not settle it as lost: the next start verifies the kept
 * upload again and commits it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { startLockHolder, type LockHolder } from '../helpers/lock-holder.ts';
import { recordingLog } from '../helpers/recording-log.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';

const recorded = recordingLog();
let coordinator: TestCoordinator;

before(async () => {
  coordinator = await startTestCoordinator({ tickIntervalMs: 100, log: recorded.log });
});

after(() => coordinator?.close());

/** Another ceremony process, which takes the data folder's lock when told to and gives it back when done. */
function anotherLockHolder(lockPath: string) {
  let holder: LockHolder | undefined;
  return {
    take: async () => void (holder = await startLockHolder(lockPath)),
    /** It releases the lock and ends (a second call does nothing). */
    async release(): Promise<void> {
      const releasing = holder;
      holder = undefined;
      await releasing?.release();
    },
  };
}

/** `name` contributes to register, the contribution made first and uploaded once the lock is held. */
async function uploadWhileLocked(name: string, holder: ReturnType<typeof anotherLockHolder>): Promise<void> {
  const client = new ContributorClient(coordinator.url);
  await client.signInDemo(name);
  await client.join();
  const { file } = await client.makeContribution('register');
  await holder.take();
  await client.upload('register', file);
}

/** `name`'s contribution is accepted and the register chain is `contributors`' links; no upload is left. */
async function assertCommitted(name: string, contributors: string[], what: string): Promise<void> {
  // Signed in afresh: a restarted coordinator listens at another address.
  const client = new ContributorClient(coordinator.url);
  await client.signInDemo(name);
  const me = await client.waitForState('register', 'accepted', what, 120_000);
  assert.deepEqual(
    me.contributions.map((c) => c.status),
    ['accepted'],
  );
  const chain = (await openCeremony(coordinator.dataDir)).chains.get('register')!;
  assert.equal(chain.headIndex, contributors.length);
  assert.deepEqual(
    chain.contributions.map((c) => c.contributor),
    contributors,
  );
  assert.deepEqual(await readdir(path.join(coordinator.dataDir, 'uploads', 'register')), []);
}

const lines = (message: string): number => recorded.lines.filter((line) => line.message === message).length;
const RETRYING = 'could not commit a verified contribution yet; trying again';

test('a verified contribution waits for the data folder lock, then is committed', async () => {
  const holder = anotherLockHolder(ceremonyPaths(coordinator.dataDir).lockPath);
  try {
    await uploadWhileLocked('alice', holder);
    const retried = (): boolean =>
      recorded.lines.some((line) => line.message === RETRYING && line.fields?.code === 'ceremony.locked');
    const alice = new ContributorClient(coordinator.url);
    await alice.signInDemo('alice');
    const meanwhile = await alice.waitFor(
      (me) => retried() || me.contributions.some((c) => c.status !== 'verifying'),
      'a commit refused by the lock, to be tried again',
      120_000,
    );
    assert.ok(retried(), 'the commit is to be tried again');
    assert.deepEqual(
      meanwhile.contributions.map((c) => c.status),
      ['verifying'],
    );
    assert.equal(meanwhile.status.circuits[0]!.state, 'verifying');
    const [upload] = coordinator.service.candidatesAwaitingVerdict();
    assert.ok((await stat(upload!)).isFile(), 'the verified upload is kept');

    await holder.release();
    await assertCommitted('alice', ['alice'], 'the contribution accepted');
  } finally {
    await holder.release();
  }
});

test('stopped while a commit waits to be retried: the next start verifies the upload again, commits it', async () => {
  const holder = anotherLockHolder(ceremonyPaths(coordinator.dataDir).lockPath);
  const retriesBefore = lines(RETRYING);
  try {
    await uploadWhileLocked('bob', holder);
    const bob = new ContributorClient(coordinator.url);
    await bob.signInDemo('bob');
    await bob.waitFor(
      () => lines(RETRYING) > retriesBefore,
      'a commit refused by the lock, to be tried again',
      120_000,
    );
    await coordinator.stop();
    // The stop ends the wait; it does not give the contribution up (that would tell bob to contribute again).
    assert.equal(lines('could not commit a verified contribution'), 0);
    assert.equal(lines('unfinished contribution settled as an error'), 0);
    const uploads = path.join(coordinator.dataDir, 'uploads', 'register');
    assert.equal((await readdir(uploads)).length, 1, 'the verified upload is kept across the stop');

    await holder.release();
    await coordinator.restart();
    assert.equal(lines('re-enqueueing an unfinished verification'), 1);
    await assertCommitted('bob', ['alice', 'bob'], 'the contribution accepted after the restart');
  } finally {
    await holder.release();
  }
});
