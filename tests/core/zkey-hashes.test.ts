/**
 * A key's hashes in one pass (core/zkey/zkey-hashes.ts): the whole file's BLAKE2b-512 and each
 * section's, whatever pieces the bytes come in; a file that is not a well-formed sectioned one (cut
 * short, or with bytes after its last section) gets its file hash and no section hashes. The
 * audit's hashing gives the same, on threads for a large file and on the calling thread for a small one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { finalisedCeremony } from '../fixtures/ceremony-fixture.ts';
import { RealWorker, withWorkerClass } from '../helpers/worker-class.ts';
import { readZkeyInfo } from '../../core/zkey/zkey-file.ts';
import { hashZkeyFile, ZkeyHasher } from '../../core/zkey/zkey-hashes.ts';
import { hashKeyOnTwoThreads } from '../../core/audit/audit-key-hashes.ts';
import { HASH_THREAD_MIN_BYTES, hashFile, hashFileOnThread } from '../../core/crypto/file-hash.ts';

const blake = (bytes: Uint8Array): string => createHash('blake2b512').update(bytes).digest('hex');

test('each section hashed on its own, the file whole, in any pieces', async () => {
  const file = path.join((await finalisedCeremony()).finalDir, 'transact21.zkey');
  const bytes = await readFile(file);
  const info = await readZkeyInfo(file);
  const expected = Object.fromEntries(
    [...info.sections.entries()]
      .sort(([a], [b]) => a - b)
      .map(([id, { offset, size }]) => [String(id), blake(bytes.subarray(offset, offset + size))]),
  );
  assert.deepEqual(await hashZkeyFile(file), { fileHash: blake(bytes), sectionHashes: expected });
  const hasher = new ZkeyHasher();
  for (let at = 0; at < bytes.length;) {
    const piece = 1 + Math.floor(Math.random() * 5000);
    hasher.update(bytes.subarray(at, at + piece));
    at += piece;
  }
  assert.deepEqual(hasher.digest(), { fileHash: blake(bytes), sectionHashes: expected });

  const cut = bytes.subarray(0, bytes.length - 1);
  assert.deepEqual(new ZkeyHasher().update(cut).digest(), { fileHash: blake(cut) });
  const longer = Buffer.concat([bytes, Buffer.from([0])]);
  assert.deepEqual(new ZkeyHasher().update(longer).digest(), { fileHash: blake(longer) });
});

test(
  "the audit's hashing gives hashZkeyFile's result (and a file's hash, hashFile's), " +
    'malformed and missing files included',
  async () => {
    const ceremony = await finalisedCeremony();
    const file = path.join(ceremony.finalDir, 'transact21.zkey');
    assert.deepEqual(await hashKeyOnTwoThreads(file), await hashZkeyFile(file));
    assert.equal(await hashFileOnThread(file), await hashFile(file));
    const sectionsOnly = new ZkeyHasher({ wholeFile: false }).update(await readFile(file));
    assert.deepEqual(sectionsOnly.sectionDigests(), (await hashZkeyFile(file)).sectionHashes);
    assert.throws(() => sectionsOnly.digest(), /sections only/);

    const dir = await mkdtemp(path.join(tmpdir(), 'two-thread-hash-'));
    try {
      const cut = path.join(dir, 'cut.zkey');
      await writeFile(cut, (await readFile(file)).subarray(0, 1000));
      const hashes = await hashKeyOnTwoThreads(cut);
      assert.deepEqual(hashes, await hashZkeyFile(cut));
      assert.equal(hashes.sectionHashes, undefined);
      await assert.rejects(hashKeyOnTwoThreads(path.join(dir, 'missing.zkey')), { code: 'ENOENT' });
      await assert.rejects(hashFileOnThread(path.join(dir, 'missing.zkey')), { code: 'ENOENT' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

test('a key is hashed on threads past HASH_THREAD_MIN_BYTES, on the calling thread below, alike', async () => {
  const file = path.join((await finalisedCeremony()).finalDir, 'transact21.zkey');
  const key = await readFile(file);
  // The key with one more section (id 99) of random bytes, past the threshold: still well formed.
  const extra = randomBytes(HASH_THREAD_MIN_BYTES + 1000);
  const head = Buffer.alloc(12);
  head.writeUInt32LE(99, 0);
  head.writeBigUInt64LE(BigInt(extra.length), 4);
  const large = Buffer.concat([key, head, extra]);
  large.writeUInt32LE(key.readUInt32LE(8) + 1, 8);
  const dir = await mkdtemp(path.join(tmpdir(), 'threaded-hash-'));
  let threads = 0;
  class CountedWorker extends RealWorker {
    constructor(...args: ConstructorParameters<typeof RealWorker>) {
      super(...args);
      threads++;
    }
  }
  try {
    await withWorkerClass(CountedWorker, async () => {
      const largeFile = path.join(dir, 'large.zkey');
      await writeFile(largeFile, large);
      const hashes = await hashKeyOnTwoThreads(largeFile);
      assert.equal(threads, 1, 'the whole-file hash ran on a thread');
      assert.deepEqual(hashes, await hashZkeyFile(largeFile));
      assert.equal(hashes.sectionHashes?.['99'], blake(extra));
      assert.equal(await hashFileOnThread(largeFile), blake(large));
      assert.equal(threads, 2);
      assert.deepEqual(await hashKeyOnTwoThreads(file), await hashZkeyFile(file));
      assert.equal(await hashFileOnThread(file), blake(key));
      assert.equal(threads, 2, 'a small key starts no thread');
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
