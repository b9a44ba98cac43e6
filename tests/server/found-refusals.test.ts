/**
 * A refusal a delta's intake finds while its bytes arrive is its owner's missed turn whichever
 * request comes next, not only a PATCH of theirs: here a delta created with its first bytes
 * (creation with upload) whose table the intake refuses on its first 12 bytes, then deleted or
 * replaced by a new creation; and one whose refusal was found before a coordinator restart, which
 * the refusal outlives (kept on its candidate row): a DELETE or a PATCH straight after it. The
 * owner it is handed in under is the one stored with the upload, which a client's own metadata
 * cannot name. An owner who no longer holds the turn gets no verdict: the upload is only deleted.
 * A refusal whose write to the row fails is logged, and answered from memory until a restart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { recordedCoordinator } from '../helpers/recorded-coordinator.ts';
import { kernelDelta } from '../helpers/kernel-delta.ts';
import { waitUntil } from '../helpers/wait-until.ts';
import { DELTA_FORMAT } from '../../core/delta/delta-format.ts';

const CIRCUIT = 'register';
// Each refusal is a missed turn: the contributors here are refused several times in a row, on purpose.
const fixture = recordedCoordinator('found-refusals-', { MAX_MISSED_TURNS: '1000' });
/** What the creations below send first: the intake refuses the table count in its first 12 bytes. */
const FIRST_BYTES = 4096;

const uploadsFolder = (): string => path.join(fixture.coordinator.dataDir, 'uploads', CIRCUIT);

/** `name` on turn, with a v2 delta on the head whose table counts 2^32 - 1 sections, and its metadata. */
async function onTurnWithRefusedDelta(name: string) {
  const client = new ContributorClient(fixture.coordinator.url);
  await client.signInDemo(name);
  await client.join();
  await client.waitForState(CIRCUIT, 'turn', `${name}’s turn`);
  const inputs = path.join(fixture.scratch, `${name}-head.skeleton`);
  const { head } = await client.downloadInputs(CIRCUIT, inputs);
  const delta = await kernelDelta(inputs, path.join(fixture.scratch, `${name}-v1.skeleton`), name);
  delta.writeUInt32LE(-1 >>> 0, 8);
  return { client, delta, metadata: { format: DELTA_FORMAT, head: String(head) } };
}

/** An upload of `delta` created with its first bytes as the creation's body; its URL. */
async function createdWithFirstBytes(
  client: ContributorClient,
  delta: Buffer,
  metadata: Record<string, string>,
): Promise<string> {
  const body = new Uint8Array(delta.subarray(0, FIRST_BYTES));
  const created = await client.createUpload(CIRCUIT, { length: delta.length, metadata, body });
  assert.equal(created.status, 201, await created.text());
  assert.equal(created.headers.get('upload-offset'), String(FIRST_BYTES));
  await new Promise((resolve) => setTimeout(resolve, 1_000)); // the intake follows the write at once
  return client.uploadUrl(created);
}

/** The client's latest contribution once there are more than `before`: its status and code. */
async function latestVerdict(client: ContributorClient, before: number): Promise<[string, string | null]> {
  const me = await client.waitFor(
    (m) => m.contributions.length > before && m.contributions.at(-1)!.status !== 'verifying',
    'the verdict',
  );
  return [me.contributions.at(-1)!.status, me.contributions.at(-1)!.code];
}

test('a delta refused as its creation’s bytes arrived is a missed turn when deleted or replaced', async () => {
  const { client: bob, delta, metadata } = await onTurnWithRefusedDelta('bob');
  // A client naming another owner in its metadata: the server's keys are written over it.
  const claimed = { ...metadata, contributor: 'demo:mallory', contributorName: 'mallory', contributorKind: 'github' };
  const before = (await bob.me()).contributions.length;
  const url = await createdWithFirstBytes(bob, delta, claimed);
  const stored = JSON.parse(await readFile(path.join(uploadsFolder(), `${path.basename(url)}.json`), 'utf8')) as {
    metadata: Record<string, string>;
  };
  assert.deepEqual(
    [stored.metadata.contributor, stored.metadata.contributorName, stored.metadata.contributorKind],
    ['demo:bob', 'bob', 'demo'],
    'the owner is who created it',
  );
  const deleted = await fetch(url, { method: 'DELETE', headers: bob.tusHeaders() });
  assert.deepEqual([deleted.status, (await bob.refusal(deleted)).code], [422, 'delta.malformed']);
  assert.deepEqual(await latestVerdict(bob, before), ['refused', 'delta.malformed'], 'deleting it is no way out');

  // Replaced by a new creation: with someone queued behind him, the verdict passes the turn on.
  await bob.waitForState(CIRCUIT, 'turn', 'the turn again');
  const carol = new ContributorClient(fixture.coordinator.url);
  await carol.signInDemo('carol');
  await carol.join();
  const beforeReplacing = (await bob.me()).contributions.length;
  await createdWithFirstBytes(bob, delta, metadata);
  const replacing = await bob.refusal(await bob.createUpload(CIRCUIT, { length: delta.length, metadata }));
  assert.deepEqual([replacing.status, replacing.code], [409, 'lobby.not_your_turn'], 'its verdict ended the turn');
  assert.deepEqual(await latestVerdict(bob, beforeReplacing), ['refused', 'delta.malformed']);
  assert.equal((await carol.progress(CIRCUIT)).state, 'turn', 'the turn passed on');
  fixture.coordinator.lobby.leave('demo:carol');
  fixture.coordinator.lobby.leave('demo:bob');
  assert.deepEqual(await readdir(uploadsFolder()), [], 'no upload is left behind');
});

/** `name` on turn with a delta whose refusal the intake found, then the coordinator restarted: the upload's URL. */
async function refusedBeforeARestart(name: string) {
  const { client, delta, metadata } = await onTurnWithRefusedDelta(name);
  const before = (await client.me()).contributions.length;
  const url = await createdWithFirstBytes(client, delta, metadata);
  // The same port, so the client and the upload's URL stay; its session and turn are in the database.
  await fixture.coordinator.restart({ PORT: new URL(fixture.coordinator.url).port });
  assert.equal((await client.progress(CIRCUIT)).state, 'turn', 'the turn survived the restart');
  return { client, delta, before, url };
}

test('a refused delta deleted straight after a restart is a missed turn: its refusal outlived it', async () => {
  const { client: dave, before, url } = await refusedBeforeARestart('dave');
  // No write since the restart: no intake here has read a byte of it.
  const deleted = await fetch(url, { method: 'DELETE', headers: dave.tusHeaders() });
  assert.deepEqual([deleted.status, (await dave.refusal(deleted)).code], [422, 'delta.malformed']);
  assert.deepEqual(await latestVerdict(dave, before), ['refused', 'delta.malformed'], 'not a way out');
  fixture.coordinator.lobby.leave('demo:dave');
  assert.deepEqual(await readdir(uploadsFolder()), [], 'no upload is left behind');
});

test('a refused delta resumed after a restart is refused at its PATCH, as before the restart', async () => {
  const { client: frank, delta, before, url } = await refusedBeforeARestart('frank');
  const resumed = await frank.patch(url, FIRST_BYTES, new Uint8Array(delta.subarray(FIRST_BYTES, 2 * FIRST_BYTES)));
  assert.deepEqual([resumed.status, (await frank.refusal(resumed)).code], [422, 'delta.malformed']);
  assert.deepEqual(await latestVerdict(frank, before), ['refused', 'delta.malformed']);
  fixture.coordinator.lobby.leave('demo:frank');
  assert.deepEqual(await readdir(uploadsFolder()), [], 'no upload is left behind');
});

test('a refused delta whose owner gave the turn up first is only deleted: no verdict without the turn', async () => {
  const { client: erin, delta, metadata } = await onTurnWithRefusedDelta('erin');
  const before = (await erin.me()).contributions.length;
  await createdWithFirstBytes(erin, delta, metadata);
  await erin.request('POST', '/api/me/leave');
  await waitUntil(async () => (await readdir(uploadsFolder())).length === 0, 'the upload of the turn given up deleted');
  const notHandedIn = fixture.logged.filter((line) => line.message === 'a refused upload could not be handed in');
  assert.equal(notHandedIn.at(-1)?.fields?.code, 'lobby.not_your_turn', 'submit found the turn gone');
  assert.equal((await erin.me()).contributions.length, before, 'no verdict recorded');
});

test('a refusal that cannot be kept on its row is logged, and the process still answers it from memory', async () => {
  // Exactly the write that keeps a refusal fails, on the coordinator's own database (a full disk, say).
  const { db } = fixture.coordinator;
  db.exec(`CREATE TRIGGER refusal_unkept BEFORE UPDATE OF refusal ON candidates
    BEGIN SELECT RAISE(FAIL, 'disk full'); END;`);
  try {
    const { client: gina, delta, metadata } = await onTurnWithRefusedDelta('gina');
    const before = (await gina.me()).contributions.length;
    const url = await createdWithFirstBytes(gina, delta, metadata);
    const unkept = fixture.logged.filter((line) => line.message === 'a refusal found could not be kept');
    assert.match(String(unkept.at(-1)?.fields?.error), /disk full/, 'the failed write is logged');
    const row = db
      .prepare<[string], { refusal: string | null }>('SELECT refusal FROM candidates WHERE upload_path = ?')
      .get(path.join(uploadsFolder(), path.basename(url)));
    assert.deepEqual(row, { refusal: null }, 'nothing was kept on the row');
    const deleted = await fetch(url, { method: 'DELETE', headers: gina.tusHeaders() });
    assert.deepEqual([deleted.status, (await gina.refusal(deleted)).code], [422, 'delta.malformed']);
    assert.deepEqual(await latestVerdict(gina, before), ['refused', 'delta.malformed'], 'the turn is still missed');
    fixture.coordinator.lobby.leave('demo:gina');
  } finally {
    db.exec('DROP TRIGGER IF EXISTS refusal_unkept');
  }
  assert.deepEqual(await readdir(uploadsFolder()), [], 'no upload is left behind');
});
