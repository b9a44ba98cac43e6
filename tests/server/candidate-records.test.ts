/**
 * One stored candidate record per upload (server/contributions/candidate-store.ts): the
 * verification request is derived from the stored rows alone (verificationRequest), so a
 * coordinator restarted on the same database sends the request normal running sent; and a database
 * of the version before the candidates table opens (its migration applied) and has its pending
 * contributions verified.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openDatabase } from '../../server/store/database.ts';
import { ContributionStore } from '../../server/contributions/contribution-store.ts';
import { verificationRequest } from '../../server/contributions/verification-request.ts';
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
  store.candidates.recordHashes(uploadPath, { fileHash: 'f'.repeat(128), sectionHashes: { '1': 'a' }, identity });
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

  // What the previous version left: the contributions module at migration 1, no candidates table.
  const old = new Database(dbFile);
  old.exec(`DROP TABLE candidates; DELETE FROM schema_migrations WHERE module = 'contributions' AND version = 2`);
  old.close();

  await coordinator.startWorker();
  await coordinator.restart();
  const migrated = coordinator.db
    .prepare(`SELECT version FROM schema_migrations WHERE module = 'contributions' ORDER BY version`)
    .all() as Array<{ version: number }>;
  assert.deepEqual(
    migrated.map((m) => m.version),
    [1, 2],
  );
  const again = new ContributorClient(coordinator.url);
  again.cookie = alice.cookie;
  again.csrfToken = alice.csrfToken;
  await again.waitFor(
    (me) => me.status.circuits.find((c) => c.circuit === 'register')?.state === 'accepted',
    'the pending contribution accepted',
  );
  assert.equal(new ContributionStore(coordinator.db).get(pending[0]!.id)!.status, 'accepted');
});
