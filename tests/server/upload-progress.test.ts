/**
 * Upload progress over HTTP against the real coordinator, on a clock the test controls (issue 62):
 * a turn held by heartbeats alone is missed UPLOAD_START_MS after its grant; one whose tus upload
 * received bytes (read by the coordinator at the upload's next request, or every second of a PATCH)
 * is not, until its upload stops gaining for UPLOAD_STALL_MS. The queue log says which, and when.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { MIN_CONTRIBUTION_RECORD_BYTES } from '../../core/zkey/zkey-file.ts';
import { ManualClock } from '../../server/clock.ts';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';

const UPLOAD_START = 60_000;
const UPLOAD_STALL = 90_000;
const clock = new ManualClock(Date.now());
let coordinator: TestCoordinator;

before(async () => {
  coordinator = await startTestCoordinator({
    env: {
      UPLOAD_START_MS: String(UPLOAD_START),
      UPLOAD_STALL_MS: String(UPLOAD_STALL),
      // Presence, silence and the deadline out of the way: only the upload rules end these turns.
      PRESENCE_MS: '0',
      TURN_SILENCE_MS: '0',
      TURN_TIMEOUT_MS: String(10 * 60_000),
    },
    clock,
    tickIntervalMs: 3_600_000,
  });
});

after(() => coordinator?.close());

/** Moves the clock on by `ms` and ticks, as the coordinator's timer would at the moment due. */
function passTime(ms: number): void {
  clock.advance(ms);
  coordinator.service.tick();
}

/** The register lapses of `who` in the queue log. */
function lapsesOf(who: string) {
  return coordinator.lobby.queueLog
    .entries()
    .flatMap((e) => (e.type === 'lapsed' && e.contributor === `demo:${who}` ? [e] : []));
}

test('heartbeats alone: missed UPLOAD_START_MS after the grant; upload bytes hold it until they stall', async () => {
  const [alice, bob] = [new ContributorClient(coordinator.url), new ContributorClient(coordinator.url)];
  await alice.signInDemo('alice');
  await bob.signInDemo('bob');
  await alice.join();
  await bob.join();
  coordinator.service.tick();
  assert.equal((await alice.progress('register')).state, 'turn');
  const aliceGranted = clock.now();
  await alice.takeByDownload('register');
  await alice.request('POST', '/api/circuits/register/heartbeat');
  passTime(UPLOAD_START);
  await alice.request('POST', '/api/circuits/register/heartbeat');
  passTime(1);
  assert.equal((await alice.progress('register')).state, 'waiting', 'her heartbeats did not hold it');
  assert.equal(lapsesOf('alice')[0]?.uploadDue, new Date(aliceGranted + UPLOAD_START).toISOString());

  // bob's turn: he uploads part of a whole key, and the upload's next request tells how far it got.
  assert.equal((await bob.progress('register')).state, 'turn');
  await bob.takeByDownload('register');
  await bob.request('POST', '/api/circuits/register/heartbeat');
  const head = (await stat(ceremonyPaths(coordinator.dataDir).zkeyPath('register', 0))).size;
  const created = await bob.createUpload('register', { length: head + MIN_CONTRIBUTION_RECORD_BYTES });
  assert.equal(created.status, 201, await created.clone().text());
  const url = bob.uploadUrl(created);
  const sent = await bob.patch(url, 0, new Uint8Array(128 * 1024));
  assert.equal(sent.status, 204, await sent.clone().text());
  const offset = await fetch(url, { method: 'HEAD', headers: bob.patchHeaders(0) });
  assert.equal(offset.headers.get('upload-offset'), String(128 * 1024));
  const progressAt = clock.now();
  passTime(UPLOAD_START + 1);
  assert.equal((await bob.progress('register')).state, 'turn', 'past UPLOAD_START_MS: his upload started');
  passTime(UPLOAD_STALL - UPLOAD_START - 1);
  assert.equal((await bob.progress('register')).state, 'turn', 'at UPLOAD_STALL_MS itself: still his');
  passTime(1);
  assert.equal((await bob.progress('register')).state, 'waiting', 'no more bytes: missed');
  const [lapse] = lapsesOf('bob');
  assert.deepEqual(
    [lapse?.taken, lapse?.missedTurns, lapse?.uploadStalledSince],
    [true, 1, new Date(progressAt).toISOString()],
  );
});
