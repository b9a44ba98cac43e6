/**
 * One stored candidate record per upload (server/contributions/candidate-store.ts): the
 * verification request is derived from the stored rows alone (verificationRequest), so a
 * coordinator restarted on the same database sends the request normal running sent, the link sums
 * the intake made included; and a database of the version before the candidates table, or before
 * its sums column, opens (its migrations applied) and has its pending contributions verified (the
 * sums files such a version kept in the state folder are removed at the start, never read).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openDatabase } from '../../server/store/database.ts';
import { ContributionStore } from '../../server/contributions/contribution-store.ts';
import { verificationRequest } from '../../server/contributions/verification-request.ts';
import { stateDirFor } from '../../core/link-check/link-challenge.ts';
import { LINK_CACHE_DIR } from '../../core/link-check/link-combination-cache.ts';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { startTestCoordinator } from '../helpers/test-coordinator.ts';

const identity = { dev: 1n, ino: 2n, size: 3n, mtimeNs: 4n };
const head = { fileHash: 'h'.repeat(128), sectionHashes: { '1': 'a', '2': 'b' } };
const places = { headZkeyPath: '/data/chains/register_0000.zkey', stateDir: '/data/.state' };

test('the request comes from the stored rows: section hashes only with the candidate’s hashes and identity', () => {
  const row = {
    id: 'c1',
    circuit: 'register',
    headIndex: 0,
    candidatePath: '/data/uploads/register/u1',
    fileHash: 'f'.repeat(128),
  };
  const candidate = { sectionHashes: { '1': 'a', '2': 'c' }, identity };
  assert.deepEqual(verificationRequest(row, candidate, head, places), {
    contributionId: 'c1',
    circuit: 'register',
    headIndex: 0,
    headZkeyPath: places.headZkeyPath,
    candidatePath: row.candidatePath,
    challenge: { stateDir: places.stateDir, headFileHash: head.fileHash, candidateFileHash: row.fileHash },
    sectionHashes: {
      head: head.sectionHashes,
      candidate: candidate.sectionHashes,
      candidateIdentity: { dev: '1', ino: '2', size: '3', mtimeNs: '4' },
    },
  });
  const bare = verificationRequest(row, undefined, head, places);
  assert.equal(bare.sectionHashes, undefined, 'no candidate row (an older database): bytes compared');
  assert.ok(bare.challenge, 'the challenge still goes');
  assert.equal(verificationRequest(row, { ...candidate, identity: null }, head, places).sectionHashes, undefined);
  assert.equal(verificationRequest(row, candidate, undefined, places).challenge, undefined, 'no head entry');
  const sums = new Uint8Array([1, 2, 3, 250]);
  assert.deepEqual(verificationRequest(row, { ...candidate, sums }, head, places).challenge, {
    stateDir: places.stateDir,
    headFileHash: head.fileHash,
    candidateFileHash: row.fileHash,
    candidateSums: Buffer.from(sums).toString('base64'),
  });
  assert.equal(
    verificationRequest(row, { ...candidate, sums: null }, head, places).challenge?.candidateSums,
    undefined,
  );
});

test('a candidate row survives a reopened database: the same request after a restart', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'candidate-records-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'coordinator.sqlite');
  const uploadPath = path.join(dir, 'uploads', 'register', 'u1');
  const requestIn = (store: ContributionStore) => {
    const row = store.byStatus('verifying')[0]!;
    return verificationRequest(row, store.candidates.get(row.candidatePath), head, places);
  };
  let db = openDatabase(file);
  let store = new ContributionStore(db);
  store.candidates.create({ uploadPath, circuit: 'register', contributorId: 'alice', headIndex: 0, createdAt: 1 });
  const sums = new Uint8Array([7, 0, 255, 9]);
  store.candidates.recordHashes(uploadPath, { fileHash: 'f'.repeat(128), sectionHashes: { '1': 'a' }, identity, sums });
  store.create({
    circuit: 'register',
    contributorId: 'alice',
    contributorName: 'alice',
    headIndex: 0,
    candidatePath: uploadPath,
    size: 10,
    fileHash: 'f'.repeat(128),
    createdAt: 2,
  });
  const running = requestIn(store);
  assert.ok(running.sectionHashes, 'normal running sends the candidate’s hashes');
  assert.equal(running.challenge?.candidateSums, Buffer.from(sums).toString('base64'), 'and the intake’s sums');
  db.close();
  db = openDatabase(file);
  store = new ContributionStore(db);
  assert.deepEqual(requestIn(store), running);
  db.close();
});

test('a database of the previous version opens, and its pending contribution is verified', async (t) => {
  const coordinator = await startTestCoordinator({ redis: true });
  t.after(() => coordinator.close());
  const alice = new ContributorClient(coordinator.url);
  await alice.signInDemo('alice');
  await alice.join();
  await alice.waitFor(
    (me) => me.status.circuits.find((c) => c.circuit === 'register')?.state === 'turn',
    'a turn on register',
  );
  // No worker yet: the contribution stays verifying across the stop.
  await alice.upload('register', (await alice.makeContribution('register')).file);
  const pending = new ContributionStore(coordinator.db).byStatus('verifying');
  assert.equal(pending.length, 1);
  const dbFile = coordinator.db.name;
  await coordinator.stop();

  // What the version before the candidates table left: the contributions module at migration 1.
  const old = new Database(dbFile);
  old.exec(`DROP TABLE candidates; DELETE FROM schema_migrations WHERE module = 'contributions' AND version >= 2`);
  old.close();
  // And a sums file such a version kept for its verifiers: no longer read, removed at the start.
  const sumsFile = path.join(stateDirFor(coordinator.dataDir), LINK_CACHE_DIR, `${pending[0]!.fileHash}.sums`);
  await mkdir(path.dirname(sumsFile), { recursive: true });
  await writeFile(sumsFile, 'sums of an earlier version');

  await coordinator.startWorker();
  await coordinator.restart();
  const migrated = coordinator.db
    .prepare(`SELECT version FROM schema_migrations WHERE module = 'contributions' ORDER BY version`)
    .all() as Array<{ version: number }>;
  assert.deepEqual(
    migrated.map((m) => m.version),
    [1, 2, 3, 4],
  );
  const again = new ContributorClient(coordinator.url);
  again.cookie = alice.cookie;
  again.csrfToken = alice.csrfToken;
  await again.waitFor(
    (me) => me.status.circuits.find((c) => c.circuit === 'register')?.state === 'accepted',
    'the pending contribution accepted',
  );
  assert.equal(new ContributionStore(coordinator.db).get(pending[0]!.id)!.status, 'accepted');
  await coordinator.uploads.leftoversRemoved;
  await assert.rejects(stat(sumsFile), { code: 'ENOENT' });
});

test('a candidate row from before the sums column opens without sums: its request carries none', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'candidate-records-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'coordinator.sqlite');
  const uploadPath = path.join(dir, 'uploads', 'register', 'u1');
  let db = openDatabase(file);
  new ContributionStore(db).candidates.create({
    uploadPath,
    circuit: 'register',
    contributorId: 'alice',
    headIndex: 0,
    createdAt: 1,
  });
  db.close();
  // The contributions module at migration 2: the candidates table as it was first released.
  const old = new Database(file);
  old.exec(
    `ALTER TABLE candidates DROP COLUMN sums;
     DELETE FROM schema_migrations WHERE module = 'contributions' AND version = 3`,
  );
  old.close();
  db = openDatabase(file);
  t.after(() => db.close());
  const store = new ContributionStore(db);
  const candidate = store.candidates.get(uploadPath);
  assert.equal(candidate?.sums, null);
  assert.equal(candidate?.headIndex, 0);
  const row = { id: 'c1', circuit: 'register', headIndex: 0, candidatePath: uploadPath, fileHash: 'f'.repeat(128) };
  assert.equal(verificationRequest(row, candidate, head, places).challenge?.candidateSums, undefined);
});
