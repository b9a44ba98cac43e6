/**
 * A key's hashes in one pass (core/zkey/zkey-hashes.ts): the whole file's BLAKE2b-512 and each
 * section's, whatever pieces the bytes come in; a file that is not a well-formed sectioned one (cut
 * short, or with bytes after its last section) gets its file hash and no section hashes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { finalisedCeremony } from '../fixtures/ceremony-fixture.ts';
import { readZkeyInfo } from '../../core/zkey/zkey-file.ts';
import { hashZkeyFile, ZkeyHasher } from '../../core/zkey/zkey-hashes.ts';

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
