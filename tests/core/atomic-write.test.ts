/**
 * writeFileAtomic: the new contents or the old, never a torn file or a leftover temporary; with
 * keepExisting, writers racing to create one file all end up reading the same, first, contents.
 * makeDirectory flushes the parent of each folder it creates, and nothing when all were there.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import type * as FsPromises from 'node:fs/promises';
import { flushAhead, makeDirectory, writeFileAtomic } from '../../core/fs/atomic-write.ts';
import { fileIdentity, sameFileIdentity } from '../../core/fs/file-identity.ts';

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

test("flushAhead leaves the file as it was (same identity: the commit's check holds) and never rejects", async () => {
  const file = path.join(dir, 'spliced.zkey');
  await writeFileAtomic(file, 'key bytes');
  const before = await fileIdentity(file);
  await flushAhead(file);
  assert.ok(sameFileIdentity(await fileIdentity(file), before));
  assert.equal(await readFile(file, 'utf8'), 'key bytes');
  await flushAhead(path.join(dir, 'gone.zkey'));
});

test('makeDirectory flushes the parent of every folder it created, and nothing when none was new', async (t) => {
  // The module's named import of open() follows the builtin's export once the exports are synced.
  const fsPromises = createRequire(import.meta.url)('node:fs/promises') as typeof FsPromises;
  const realOpen = fsPromises.open;
  const opened: string[] = [];
  fsPromises.open = ((file: string, ...rest: []) => {
    opened.push(String(file));
    return realOpen(file, ...rest);
  }) as typeof realOpen;
  syncBuiltinESMExports();
  t.after(() => {
    fsPromises.open = realOpen;
    syncBuiltinESMExports();
  });

  const base = path.join(dir, 'made');
  await makeDirectory(path.join(base, 'a', 'b'));
  assert.deepEqual(opened, [path.join(base, 'a'), base, dir], 'the parents of b, a and made');
  assert.ok((await stat(path.join(base, 'a', 'b'))).isDirectory());
  opened.length = 0;
  await makeDirectory(path.join(base, 'a', 'b'));
  await makeDirectory(path.join(base, 'a', 'c'));
  assert.deepEqual(opened, [path.join(base, 'a')], 'only the parent of the one new folder, c');
});
