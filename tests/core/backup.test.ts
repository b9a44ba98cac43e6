/**
 * `ceremony backup` (core/data-folder/backup-ceremony.ts) on a ceremony whose coordinator serves it:
 * what a backup holds and how (the keys the transcript records, checked; the database by SQLite's
 * online backup; the private state at mode 0600, its secrets named), what it leaves out (the queue
 * log's file, uploads, the heads' skeletons, orphan keys, locks), that it waits for the writers' lock
 * and refuses when the lock stays taken or a key is not the one recorded, writing nothing then, and
 * `--link-dest`; and a copy restored beside its original, whose coordinator settles a contribution
 * that was being verified at the backup without touching the original folder's upload. The restore
 * itself, a coordinator killed and started on a backup, is tests/server/backup-restore.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { appendFile, mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { startLockHolder } from '../helpers/lock-holder.ts';
import { runCli } from '../helpers/run-cli.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { copyCeremony } from '../fixtures/ceremony-fixture.ts';
import { backupCeremony } from '../../core/data-folder/backup-ceremony.ts';
import { BACKUP_RECORD_FILE, type BackupRecord } from '../../core/data-folder/backup-record.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { hashFile } from '../../core/crypto/file-hash.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { isCoordinatorError } from '../../core/errors.ts';

const TWO = {
  circuits: [
    { name: 'register', verifier: 'VerifierRegister', publicInputs: 6, r1cs: 'circuits/register.r1cs' },
    { name: 'transact21', verifier: 'VerifierTransact21', publicInputs: 12, r1cs: 'circuits/transact21.r1cs' },
  ],
};

let coordinator: TestCoordinator;
let scratch: string;
let firstBackup: string;

before(async () => {
  coordinator = await startTestCoordinator({ ceremony: { configOverrides: TWO }, tickIntervalMs: 100 });
  scratch = await mkdtemp(path.join(tmpdir(), 'backup-'));
  await ContributorClient.contributed(coordinator.url, 'alice', 'register', 'transact21');
  // The heads' skeletons (state/skeletons/) exist once someone read a head's inputs.
  const bob = new ContributorClient(coordinator.url);
  await bob.signInDemo('bob');
  await bob.join();
  await bob.downloadInputs('register', path.join(scratch, 'inputs.bin'));
  assert.ok((await readdir(path.join(coordinator.dataDir, 'state', 'skeletons'))).length > 0);
});

after(async () => {
  await coordinator?.close();
  await cleanUp(scratch);
});

const modeOf = async (file: string): Promise<number> => (await stat(file)).mode & 0o777;

async function listFiles(dir: string, prefix = ''): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) found.push(...(await listFiles(path.join(dir, entry.name), relative)));
    else found.push(relative);
  }
  return found.sort();
}

describe('a backup of a ceremony being served', () => {
  test('holds the recorded keys, the transcript, the database and the private state, its secrets at 0600', async () => {
    firstBackup = path.join(scratch, 'first');
    // The first of a schedule: no earlier backup where --link-dest points yet, so everything is copied.
    const result = await runCli([
      'backup',
      '--data',
      coordinator.dataDir,
      '--link-dest',
      path.join(scratch, 'latest'),
      firstBackup,
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /no earlier backup at .*latest: copying everything/);
    assert.match(result.stdout, /^backed up shielded-pool-phase2-testnet to .*first: \d+ files, /m);
    assert.match(result.stdout, /^transcript: 4 entries, the last [0-9a-f]{16}…$/m);
    assert.match(result.stdout, /^database: state\/coordinator\.sqlite \(SQLite online backup, /m);
    assert.match(result.stdout, /^SECRET \(mode 0600\): state\/receipt-key\.pem, the receipt signing key$/m);
    assert.match(result.stdout, /^SECRET \(mode 0600\): state\/link-challenge\.seed, the link check's secret seed$/m);

    const files = await listFiles(firstBackup);
    const state = await openCeremony(coordinator.dataDir);
    for (const chain of state.chains.values()) {
      for (const entry of [chain.init!, ...chain.contributions]) {
        const key = path.relative(coordinator.dataDir, state.paths.zkeyPath(chain.circuit.name, entry.index));
        assert.equal(await hashFile(path.join(firstBackup, key)), entry.fileHash, key);
      }
    }
    assert.deepEqual(
      await readFile(path.join(firstBackup, 'transcript/transcript.jsonl')),
      await readFile(state.paths.transcriptPath),
    );
    for (const kept of [
      'ceremony.json',
      'receipt-public-key.pem',
      'circuits/register.r1cs',
      'ptau/dev-pot10-insecure.ptau',
    ])
      assert.ok(files.includes(kept), `${kept} in ${files.join(', ')}`);
    // Left out: what the coordinator makes again, what is in flight, what is not the ceremony's.
    for (const file of files) {
      assert.doesNotMatch(file, /^(uploads\/|state\/skeletons\/|\.ceremony-|transcript\/queue-log)/, file);
      assert.doesNotMatch(file, /-wal$|-shm$|\.tmp/, file);
    }
    assert.equal(await modeOf(path.join(firstBackup, 'state')), 0o700);
    for (const file of files.filter((f) => f.startsWith('state/')))
      assert.equal(await modeOf(path.join(firstBackup, file)), 0o600, file);

    // The database: the coordinator's as it stood, whole (SQLite checks it), in one file.
    const copy = new Database(path.join(firstBackup, 'state/coordinator.sqlite'), { readonly: true });
    try {
      assert.equal(copy.pragma('quick_check', { simple: true }), 'ok');
      const accepted = copy.prepare("SELECT COUNT(*) AS n FROM queue_log WHERE type = 'accepted'").get() as {
        n: number;
      };
      assert.equal(accepted.n, 2);
    } finally {
      copy.close();
    }
    const record = JSON.parse(await readFile(path.join(firstBackup, BACKUP_RECORD_FILE), 'utf8')) as BackupRecord;
    assert.deepEqual(record.secret, ['state/receipt-key.pem', 'state/link-challenge.seed']);
    assert.equal(record.transcript.lastHash, state.transcript.entries.at(-1)!.hash);
    assert.deepEqual(
      record.files.map((f) => f.path).sort(),
      files.filter((f) => f !== BACKUP_RECORD_FILE && f !== 'state/coordinator.sqlite'),
    );
  });

  test('refuses a destination that exists, and a --link-dest that is no backup of this ceremony', async () => {
    const exists = await runCli(['backup', '--data', coordinator.dataDir, firstBackup]);
    assert.equal(exists.code, 1);
    assert.match(exists.stderr, /^error \[backup\.out_exists\]: /m);
    const other = await runCli([
      'backup',
      '--data',
      coordinator.dataDir,
      '--link-dest',
      scratch,
      path.join(scratch, 'never'),
    ]);
    assert.equal(other.code, 2);
    assert.match(other.stderr, /^error \[backup\.not_a_backup\]: .* it has no backup\.json/m);
    assert.deepEqual(
      (await readdir(scratch)).filter((name) => name.includes('never')),
      [],
    );
  });

  test('--link-dest: keys that did not change are hard links to the earlier backup, the rest copied', async () => {
    const bob = new ContributorClient(coordinator.url);
    await bob.signInDemo('bob');
    await bob.takeTurn('register');
    const second = path.join(scratch, 'second');
    const result = await runCli(['backup', '--data', coordinator.dataDir, '--link-dest', firstBackup, second]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /\d+ linked from /);
    const inode = async (dir: string, file: string) => (await stat(path.join(dir, file))).ino;
    for (const key of [
      'chains/register/register_0001.zkey',
      'chains/transact21/transact21_0001.zkey',
      'ptau/dev-pot10-insecure.ptau',
    ])
      assert.equal(await inode(second, key), await inode(firstBackup, key), `${key} linked`);
    // Bob's key is new; the transcript and the state changed or are private: copies.
    assert.equal(
      await hashFile(path.join(second, 'chains/register/register_0002.zkey')),
      (await openCeremony(coordinator.dataDir)).chains.get('register')!.head!.fileHash,
    );
    for (const copied of ['transcript/transcript.jsonl', 'state/receipt-key.pem'])
      assert.notEqual(await inode(second, copied), await inode(firstBackup, copied), copied);
  });
});

describe('consistency and refusals', () => {
  test('waits while another process holds the writers’ lock, refuses if it is held too long', async () => {
    const lockPath = ceremonyPaths(coordinator.dataDir).lockPath;
    const holder = await startLockHolder(lockPath);
    const refusedOut = path.join(scratch, 'refused');
    try {
      await assert.rejects(backupCeremony(coordinator.dataDir, refusedOut, { lockWaitMs: 500 }), (error: unknown) => {
        assert.ok(isCoordinatorError(error) && error.code === 'ceremony.locked', String(error));
        assert.match(error.message, new RegExp(`pid ${holder.pid}`));
        return true;
      });
      assert.deepEqual(
        (await readdir(scratch)).filter((name) => name.includes('refused')),
        [],
      );
      const waited = path.join(scratch, 'waited');
      let finished = false;
      const backup = backupCeremony(coordinator.dataDir, waited, { lockWaitMs: 60_000 }).then((r) => {
        finished = true;
        return r;
      });
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.equal(finished, false, 'no backup while another holds the lock');
      await holder.release();
      assert.equal((await backup).record.ceremony, coordinator.config.id);
    } finally {
      await holder.kill();
    }
  });

  test('an orphan key beyond a head is left out; a key unlike its record stops the backup', async () => {
    const copy = await copyCeremony(coordinator.dataDir);
    try {
      const state = await openCeremony(copy);
      const orphan = state.paths.zkeyPath('transact21', state.chains.get('transact21')!.headIndex + 1);
      await writeFile(orphan, 'written, never committed');
      const out = path.join(scratch, 'orphan');
      await backupCeremony(copy, out);
      await assert.rejects(stat(path.join(out, 'chains/transact21', path.basename(orphan))), { code: 'ENOENT' });

      await appendFile(state.paths.zkeyPath('register', 1), 'x');
      const damaged = path.join(scratch, 'damaged');
      await assert.rejects(
        backupCeremony(copy, damaged),
        /chain\.file_hash_mismatch|not the file the transcript records/,
      );
      assert.deepEqual(
        (await readdir(scratch)).filter((name) => name.includes('damaged')),
        [],
      );
    } finally {
      await cleanUp(copy);
    }
  });
});

describe('a copy restored beside its original', () => {
  test('settles a contribution verifying at the backup as lost, never taking the original’s upload', async () => {
    // Verification by workers, none running: the contribution stays `verifying` through the backup.
    const original = await startTestCoordinator({ redis: true, ceremony: { configOverrides: TWO } });
    try {
      const carol = new ContributorClient(original.url);
      await carol.signInDemo('carol');
      await carol.join();
      await carol.waitForState('register', 'turn', "carol's turn");
      const { file } = await carol.makeContribution('register');
      await carol.upload('register', file);
      await carol.waitFor((me) => me.status.circuits[0]!.state === 'verifying', 'verifying');
      const uploads = path.join(original.dataDir, 'uploads');
      const uploadsBefore = await listFiles(uploads);
      assert.ok(uploadsBefore.length > 0);

      const backup = path.join(scratch, 'while-verifying');
      await backupCeremony(original.dataDir, backup);
      const restoredDir = path.join(scratch, 'restored-beside');
      await promisify(execFile)('cp', ['-a', backup, restoredDir]);
      const restored = await startTestCoordinator({ dataDir: restoredDir, tickIntervalMs: 100 });
      try {
        const carolThere = new ContributorClient(restored.url);
        await carolThere.signInDemo('carol');
        const me = await carolThere.waitFor(
          (view) => view.contributions.some((c) => c.status === 'error'),
          'the contribution settled',
        );
        assert.equal(me.contributions[0]!.code, 'verification.unavailable');
        assert.equal((await openCeremony(restoredDir)).chains.get('register')!.headIndex, 0);
        assert.deepEqual(await listFiles(uploads), uploadsBefore, 'the original folder’s upload is where it was');
      } finally {
        await restored.close();
      }
    } finally {
      await original.close();
    }
  });
});
