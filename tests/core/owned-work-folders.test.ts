/**
 * Work folders told apart by their owner's kernel lock, not by the pid in their name: a sweep keeps
 * the folders of live owners (this process's, and another process's, in a PID namespace of its
 * own where the machine allows, as another container's would be) and removes a killed owner's
 * folder with its lock, a folder left with no lock at all (an older version's), and a
 * lock left with no folder. done() leaves nothing behind.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { makeOwnedWorkFolder, removeDeadOwnersFolders } from '../../core/fs/owned-work-folders.ts';
import { pidNamespacesAvailable, startLockHolder } from '../helpers/lock-holder.ts';

const PREFIX = 'work-';

test('a sweep keeps live owners’ folders and removes what dead ones left; done() leaves nothing', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'owned-folders-'));
  t.after(() => rm(dir, { recursive: true, force: true }));

  const mine = await makeOwnedWorkFolder(dir, PREFIX);
  assert.match(path.basename(mine.path), new RegExp(`^${PREFIX}${process.pid}-[0-9a-f]+$`));
  await writeFile(path.join(mine.path, 'key.zkey'), 'a key');

  // Another process's folder; its name carries this process's pid, as another container's may.
  const theirs = path.join(dir, `${PREFIX}${process.pid}-0a1b2c`);
  await mkdir(theirs);
  const owner = await startLockHolder(`${theirs}.owner`, { ownPidNamespace: pidNamespacesAvailable(), note: false });
  t.after(() => owner.kill());

  const killed = path.join(dir, `${PREFIX}4242-3d4e5f`);
  await mkdir(killed);
  await writeFile(path.join(killed, 'half.zkey'), 'half a key');
  await (await startLockHolder(`${killed}.owner`, { note: false })).kill();
  const unlocked = path.join(dir, `${PREFIX}4343-6a7b8c`); // an older version's: no lock beside it
  await mkdir(unlocked);
  await writeFile(path.join(dir, `${PREFIX}4444-9d0e1f.owner`), ''); // a lock whose folder is gone
  await writeFile(path.join(dir, 'unrelated'), 'kept');

  assert.equal(await removeDeadOwnersFolders(dir, PREFIX), 2, 'two folders removed');
  const base = (file: string) => path.basename(file);
  assert.deepEqual(
    (await readdir(dir)).sort(),
    [base(theirs), `${base(theirs)}.owner`, base(mine.path), `${base(mine.path)}.owner`, 'unrelated'].sort(),
  );
  assert.deepEqual(await readdir(mine.path), ['key.zkey'], 'this process’s folder untouched');

  await mine.done();
  await owner.release();
  assert.equal(await removeDeadOwnersFolders(dir, PREFIX), 1, 'the released owner’s folder goes');
  assert.deepEqual(await readdir(dir), ['unrelated']);
});

test('a new folder whose owner’s lock a sweep took before its owner did gets another name', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'owned-folders-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const taken = path.join(dir, `${PREFIX}${process.pid}-aaaaaa`);
  const sweeper = await startLockHolder(`${taken}.owner`, { note: false });
  t.after(() => sweeper.kill());
  const names = ['aaaaaa', 'bbbbbb'];
  const made = await makeOwnedWorkFolder(dir, PREFIX, () => names.shift()!);
  assert.equal(path.basename(made.path), `${PREFIX}${process.pid}-bbbbbb`, 'the second name, its lock free');
  await made.done();
});
