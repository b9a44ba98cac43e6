/**
 * A verified contribution whose commit finds the data folder locked by another live process (the
 * coordinator's own `ceremony contribute` on another circuit, say) is not thrown away: it stays
 * `verifying`, its upload kept, and is committed once the lock is released. A coordinator stopped while
 * such a commit waits to be tried again does not settle it as lost: the next start verifies the kept
 * upload again and commits it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ContributorClient } from '../helpers/contributor-client.ts';
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

test('a verified contribution waits for the data folder lock, then is committed', async () => {
  const { dataDir } = coordinator;
  const lockPath = ceremonyPaths(dataDir).lockPath;
  // Another ceremony process, alive, holding the lock.
  const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120_000)'], { stdio: 'ignore' });
  try {
    const alice = new ContributorClient(coordinator.url);
    await alice.signInDemo('alice');
    await alice.join();
    const { file } = await alice.makeContribution('register');
    await writeFile(lockPath, String(other.pid));
    await alice.upload('register', file);

    const retried = (): boolean =>
      recorded.lines.some(
        (line) =>
          line.message === 'could not commit a verified contribution yet; trying again' &&
          line.fields?.code === 'ceremony.locked',
      );
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

    // The other process is done: it removes its lock as it ends.
    await rm(lockPath);
    other.kill('SIGKILL');
    const me = await alice.waitForState('register', 'accepted', 'the contribution accepted', 60_000);
    assert.deepEqual(
      me.contributions.map((c) => c.status),
      ['accepted'],
    );
    const chain = (await openCeremony(dataDir)).chains.get('register')!;
    assert.equal(chain.headIndex, 1);
    assert.deepEqual(
      chain.contributions.map((c) => c.contributor),
      ['alice'],
    );
    assert.deepEqual(await readdir(path.join(dataDir, 'uploads', 'register')), []);
  } finally {
    other.kill('SIGKILL');
    await rm(lockPath, { force: true });
  }
});

test('stopped while a commit waits to be retried: the next start verifies the upload again, commits it', async () => {
  const { dataDir } = coordinator;
  const lockPath = ceremonyPaths(dataDir).lockPath;
  const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120_000)'], { stdio: 'ignore' });
  const lines = (message: string): number => recorded.lines.filter((line) => line.message === message).length;
  const retriesBefore = lines('could not commit a verified contribution yet; trying again');
  try {
    const bob = new ContributorClient(coordinator.url);
    await bob.signInDemo('bob');
    await bob.join();
    const { file } = await bob.makeContribution('register');
    await writeFile(lockPath, String(other.pid));
    await bob.upload('register', file);
    await bob.waitFor(
      () => lines('could not commit a verified contribution yet; trying again') > retriesBefore,
      'a commit refused by the lock, to be tried again',
      120_000,
    );
    await coordinator.stop();
    // The stop ends the wait; it does not give the contribution up (that would tell bob to contribute again).
    assert.equal(lines('could not commit a verified contribution'), 0);
    assert.equal(lines('unfinished contribution settled as an error'), 0);
    const uploads = path.join(dataDir, 'uploads', 'register');
    assert.equal((await readdir(uploads)).length, 1, 'the verified upload is kept across the stop');

    await rm(lockPath);
    other.kill('SIGKILL');
    await coordinator.restart();
    assert.equal(lines('re-enqueueing an unfinished verification'), 1);
    // The same contributor signing in again to the restarted coordinator (its address changed).
    const again = new ContributorClient(coordinator.url);
    await again.signInDemo('bob');
    const me = await again.waitForState('register', 'accepted', 'the contribution accepted after the restart', 120_000);
    assert.deepEqual(
      me.contributions.map((c) => c.status),
      ['accepted'],
    );
    const chain = (await openCeremony(dataDir)).chains.get('register')!;
    assert.equal(chain.headIndex, 2);
    assert.deepEqual(
      chain.contributions.map((c) => c.contributor),
      ['alice', 'bob'],
    );
    assert.deepEqual(await readdir(uploads), []);
  } finally {
    other.kill('SIGKILL');
    await rm(lockPath, { force: true });
  }
});
