/**
 * The test helpers keep their promise that every test stops what it started: startTestCoordinator's
 * close() stops the coordinator, the `ceremony worker` process group and the Redis it started, and
 * removes the folder it made (a given folder is left as it was); a start-up that fails leaves
 * nothing behind; restart() serves the same folder again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { newCeremonyDir } from '../fixtures/ceremony-fixture.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { groupAlive } from '../helpers/process-group.ts';
import { startTestCoordinator } from '../helpers/test-coordinator.ts';
import { isCoordinatorError } from '../../core/errors.ts';

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function healthy(url: string): Promise<boolean> {
  return fetch(`${url}/healthz`).then(
    (response) => response.ok,
    () => false,
  );
}

test('close() stops the coordinator, the worker’s process group and the Redis, and removes its folder', async () => {
  const coordinator = await startTestCoordinator({ redis: true, worker: { echo: 'none' } });
  try {
    assert.ok(await healthy(coordinator.url));
    assert.equal(coordinator.phase.get(), 'open');
    assert.ok(existsSync(path.join(coordinator.dataDir, 'transcript', 'transcript.jsonl')), 'initialised');
    assert.match(coordinator.worker!.output(), /ready on queue/);
    assert.ok(await answers(coordinator.redis!.port));
  } finally {
    await coordinator.close();
  }
  assert.equal(await healthy(coordinator.url), false, 'the coordinator stopped');
  assert.equal(groupAlive(coordinator.worker!.child.pid!), false, 'the worker and what it started stopped');
  assert.equal(await answers(coordinator.redis!.port), false, 'the Redis stopped');
  assert.equal(existsSync(coordinator.dataDir), false, 'the folder is removed');
  await coordinator.close(); // a second close() is a no-op
});

test('a given folder stays the caller’s; restart() serves it again, stop() only stops the coordinator', async () => {
  const dataDir = await newCeremonyDir({ init: true });
  try {
    const coordinator = await startTestCoordinator({ dataDir, open: false });
    try {
      assert.equal(coordinator.phase.get(), 'setup');
      coordinator.phase.set('open', Date.now());
      const firstDb = coordinator.db;
      await coordinator.restart();
      assert.equal(firstDb.open, false, 'the first coordinator stopped');
      assert.notEqual(coordinator.db, firstDb, 'the object now holds the new coordinator');
      assert.ok(await healthy(coordinator.url));
      assert.equal(coordinator.phase.get(), 'open', 'the same folder and database');
      await coordinator.stop();
      assert.equal(await healthy(coordinator.url), false);
    } finally {
      await coordinator.close();
    }
    assert.ok(existsSync(path.join(dataDir, 'ceremony.json')), 'the given folder is left');
  } finally {
    await cleanUp(dataDir);
  }
});

test('a start-up that fails removes the folder it made and reports the start-up error', async () => {
  const parentDir = await mkdtemp(path.join(tmpdir(), 'test-coordinator-'));
  try {
    await assert.rejects(startTestCoordinator({ ceremony: { parentDir }, init: false }), (error: unknown) =>
      isCoordinatorError(error, 'ceremony.not_initialised'),
    );
    assert.deepEqual(await readdir(parentDir), [], 'nothing left behind');
  } finally {
    await rm(parentDir, { recursive: true, force: true });
  }
});
