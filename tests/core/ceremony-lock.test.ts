/**
 * The data-folder lock. Within one process, two callers (two commits of one coordinator) take
 * turns rather than run side by side, and a failed one lets the next through. Across processes it
 * is the kernel's: a live holder refuses others, naming itself, whatever its pid and namespace (two
 * containers' first processes are both pid 1), and a holder killed with kill -9 leaves nothing
 * that keeps the lock. A lock file that is not empty is refused, saying what to do. (Many processes
 * racing for it: ceremony-lock-race.test.ts.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { withCeremonyLock } from '../../core/data-folder/ceremony-lock.ts';
import { isCoordinatorError } from '../../core/errors.ts';
import { pidNamespacesAvailable, startLockHolder, tryLockFromAnotherProcess } from '../helpers/lock-holder.ts';

async function lockInTempDir(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ceremony-lock-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return path.join(dir, 'state', '.ceremony-writer.lock');
}

test('callers of one process take turns, in order, and a failure releases the lock', async (t) => {
  const lockPath = await lockInTempDir(t);
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
    assert.equal(JSON.parse(await readFile(`${lockPath}.holder`, 'utf8')).pid, process.pid, "the holder's note");
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
  await assert.rejects(
    readFile(`${lockPath}.holder`),
    { code: 'ENOENT' },
    "the holder's note is gone when the last caller is done",
  );
  assert.equal(await withCeremonyLock(lockPath, async () => 'free'), 'free', 'and the lock is free');
});

test('a live holder in another process refuses this one, naming itself; killed, it frees the lock', async (t) => {
  const lockPath = await lockInTempDir(t);
  const holder = await startLockHolder(lockPath);
  t.after(() => holder.kill());
  const refusal = (error: unknown) =>
    isCoordinatorError(error, 'ceremony.locked') &&
    error.message.includes(`\`ceremony hold\`, pid ${holder.pid} on host ${hostname()}, since 20`) &&
    !error.message.includes(lockPath);
  await assert.rejects(
    withCeremonyLock(lockPath, async () => 'ran'),
    refusal,
  );
  const other = await tryLockFromAnotherProcess(lockPath);
  assert.equal(other.result, 'refused', 'a third process is refused too');

  // kill -9 mid-hold: no stale lock to judge, no takeover; its note is left and replaced.
  await holder.kill();
  assert.equal(await withCeremonyLock(lockPath, async () => 'ran'), 'ran');
  assert.equal((await tryLockFromAnotherProcess(lockPath)).result, 'entered');

  const next = await startLockHolder(lockPath);
  t.after(() => next.kill());
  await assert.rejects(
    withCeremonyLock(lockPath, async () => 'ran'),
    (error: unknown) => isCoordinatorError(error, 'ceremony.locked') && error.message.includes(`pid ${next.pid} `),
    "the next holder's note, not the killed one's",
  );
  await next.release();
  assert.equal(await withCeremonyLock(lockPath, async () => 'ran'), 'ran', 'released, it is free');
});

test('processes of other PID namespaces, each pid 1 (two containers), never hold it together', async (t) => {
  if (!pidNamespacesAvailable()) {
    // Root is needed for `unshare --pid`; CI runs as root, so there this always runs.
    t.skip('unshare --pid is not permitted here (it needs root)');
    return;
  }
  const lockPath = await lockInTempDir(t);
  const holder = await startLockHolder(lockPath, { ownPidNamespace: true });
  t.after(() => holder.kill());
  const contender = await tryLockFromAnotherProcess(lockPath, { ownPidNamespace: true });
  assert.deepEqual([holder.pid, contender.pid], [1, 1], 'both are pid 1 of their namespaces');
  assert.equal(contender.result, 'refused', 'a pid equal to its own is not a lock left behind');
  assert.equal(contender.code, 'ceremony.locked');
  await assert.rejects(
    withCeremonyLock(lockPath, async () => 'ran'),
    (error: unknown) => isCoordinatorError(error, 'ceremony.locked'),
  );
  await holder.kill();
  assert.equal((await tryLockFromAnotherProcess(lockPath, { ownPidNamespace: true })).result, 'entered');
});

test('a lock file that is not empty (put there by hand) is refused with what to do, nothing run', async (t) => {
  const lockPath = await lockInTempDir(t);
  await mkdir(path.dirname(lockPath), { recursive: true });
  await writeFile(lockPath, '12345\n'); // a pid, say, as the old lock held
  let ran = false;
  await assert.rejects(
    withCeremonyLock(lockPath, async () => void (ran = true)),
    /^Error: \.ceremony-writer\.lock is not an empty lock file: remove it once no ceremony process runs$/,
  );
  assert.equal(ran, false);
  await rm(lockPath);
  assert.equal(await withCeremonyLock(lockPath, async () => 'ran'), 'ran');
});
