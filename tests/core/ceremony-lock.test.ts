/**
 * The data-folder lock within one process: two callers (two commits of one coordinator) take
 * turns rather than run side by side, a failed one lets the next through, and a lock file left
 * with this process's pid by nobody here is taken over as stale. An empty lock file (another
 * writer's, mid-acquire) is not stale until it stays empty a minute; a takeover token left by a
 * dead process does not keep a stale lock for ever. (Across processes: ceremony-lock-race.test.ts.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { withCeremonyLock } from '../../core/data-folder/ceremony-lock.ts';
import { isCoordinatorError } from '../../core/errors.ts';

test('callers of one process take turns, in order, and a failure releases the lock', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'ceremony-lock-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const lockPath = path.join(dir, 'state', 'ceremony.lock');
  const events: string[] = [];
  let releaseFirst!: () => void;
  const firstMayEnd = new Promise<void>((resolve) => (releaseFirst = resolve));
  let firstStarted!: () => void;
  const firstIsIn = new Promise<void>((resolve) => (firstStarted = resolve));

  const first = withCeremonyLock(lockPath, async () => {
    events.push('first in');
    firstStarted();
    await firstMayEnd;
    events.push('first out');
    throw new Error('first failed');
  });
  await firstIsIn;
  const second = withCeremonyLock(lockPath, async () => {
    events.push('second in');
    assert.equal(await readFile(lockPath, 'utf8'), String(process.pid));
    events.push('second out');
    return 2;
  });
  const third = withCeremonyLock(lockPath, async () => {
    events.push('third in');
    return 3;
  });
  // The others are queued behind the first: let every pending callback run, then check.
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(events, ['first in']);
  releaseFirst();
  await assert.rejects(first, /first failed/);
  assert.equal(await second, 2);
  assert.equal(await third, 3);
  assert.deepEqual(events, ['first in', 'first out', 'second in', 'second out', 'third in']);
  await assert.rejects(readFile(lockPath), { code: 'ENOENT' }, 'the lock file is gone when the last caller is done');
});

test('a lock file with this pid that nobody here holds is stale and taken over', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'ceremony-lock-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const lockPath = path.join(dir, 'ceremony.lock');
  await writeFile(lockPath, String(process.pid));
  assert.equal(await withCeremonyLock(lockPath, async () => 'ran'), 'ran');
});

test('an empty lock file is a writer mid-acquire, not stale, until it stays empty a minute', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'ceremony-lock-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const lockPath = path.join(dir, 'ceremony.lock');
  await writeFile(lockPath, '');
  await assert.rejects(
    withCeremonyLock(lockPath, async () => 'ran'),
    (error: unknown) => isCoordinatorError(error, 'ceremony.locked'),
  );
  assert.equal(await readFile(lockPath, 'utf8'), '', 'left in place for its writer');
  const twoMinutesAgo = new Date(Date.now() - 120_000);
  await utimes(lockPath, twoMinutesAgo, twoMinutesAgo);
  assert.equal(await withCeremonyLock(lockPath, async () => 'ran'), 'ran');
});

test('a stale lock whose takeover token was left by a dead process is still taken over', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'ceremony-lock-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const lockPath = path.join(dir, 'ceremony.lock');
  const deadPid = String(spawnSync(process.execPath, ['-e', '']).pid);
  await writeFile(lockPath, deadPid);
  await writeFile(`${lockPath}.takeover`, deadPid);
  assert.equal(await withCeremonyLock(lockPath, async () => readFile(lockPath, 'utf8')), String(process.pid));
  await assert.rejects(readFile(`${lockPath}.takeover`), { code: 'ENOENT' });
  await assert.rejects(readFile(lockPath), { code: 'ENOENT' });
});
