/**
 * writeFileAtomic: the new contents or the old, never a torn file or a leftover temporary; with
 * keepExisting, writers racing to create one file all end up reading the same, first, contents.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeFileAtomic } from '../../core/fs/atomic-write.ts';

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'atomic-write-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('replaces the target, creates its folders with their mode, leaves no temporary file', async () => {
  const target = path.join(dir, 'replace', 'inner', 'file.txt');
  assert.equal(await writeFileAtomic(target, 'one', { directoryMode: 0o700 }), true);
  assert.equal(await writeFileAtomic(target, 'two'), true);
  assert.equal(await readFile(target, 'utf8'), 'two');
  assert.equal((await stat(path.dirname(target))).mode & 0o777, 0o700);
  assert.deepEqual(await readdir(path.dirname(target)), ['file.txt']);
});

test('a private file gets mode 0600', async () => {
  const target = path.join(dir, 'private.bin');
  await writeFileAtomic(target, Uint8Array.of(1, 2, 3), { mode: 0o600 });
  assert.equal((await stat(target)).mode & 0o777, 0o600);
});

test('keepExisting: racing writers agree on one content and only one reports it written', async () => {
  const target = path.join(dir, 'race', 'seed');
  const contents = Array.from({ length: 8 }, (_, i) => `writer ${i}`);
  const written = await Promise.all(
    contents.map((c) => writeFileAtomic(target, c, { keepExisting: true, mode: 0o600 })),
  );
  assert.equal(written.filter(Boolean).length, 1);
  const winner = contents[written.indexOf(true)];
  assert.equal(await readFile(target, 'utf8'), winner);
  assert.equal(await writeFileAtomic(target, 'late', { keepExisting: true }), false);
  assert.equal(await readFile(target, 'utf8'), winner);
  assert.deepEqual(await readdir(path.dirname(target)), ['seed']);
});
