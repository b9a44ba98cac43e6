/**
 * The commit of a contribution a verifier already checked (commitPreverifiedContribution): it
 * commits only the bytes that were hashed. With the identity the file had when it was hashed
 * (`hashedAs`), an untouched file is committed without being hashed again; a file written since
 * (same size, another byte) is refused with chain.file_hash_mismatch, identity or not, and the
 * chain does not move.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { commitPreverifiedContribution } from '../../core/ceremony/extend-chain.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { hashFile } from '../../core/crypto/file-hash.ts';
import { isCoordinatorError } from '../../core/errors.ts';
import { fileIdentity } from '../../core/fs/file-identity.ts';
import { contributeFast } from '../../core/kernel/contribute-fast.ts';
import { verifyLinkFromHead } from '../../core/link-check/verify-link-from-head.ts';
import { newCeremonyDir } from '../fixtures/ceremony-fixture.ts';
import { cleanUp } from '../helpers/clean-up.ts';

const CIRCUIT = 'register';
let dataDir: string;

before(async () => {
  dataDir = await newCeremonyDir({ init: true });
});
after(() => cleanUp(dataDir));

/** A verified next link on the head, in the data folder, with its hash and identity as hashed. */
async function candidate(name: string) {
  const head = ceremonyPaths(dataDir).zkeyPath(CIRCUIT, (await openCeremony(dataDir)).chains.get(CIRCUIT)!.headIndex);
  const file = path.join(dataDir, `${name}.zkey`);
  await contributeFast(head, file, name, `entropy of ${name}`, { workers: 2 });
  const link = await verifyLinkFromHead(head, file);
  const hashedAs = await fileIdentity(file);
  return { file, fileHash: await hashFile(file), hashedAs, contributionHash: link.contributionHash };
}

async function flipLastByte(file: string): Promise<void> {
  // Past the filesystem's timestamp granularity, as any later write would be.
  await new Promise((wait) => setTimeout(wait, 20));
  const handle = await open(file, 'r+');
  try {
    const { size } = await handle.stat();
    const byte = Buffer.alloc(1);
    await handle.read(byte, 0, 1, size - 1);
    byte[0] = byte[0]! ^ 0xff;
    await handle.write(byte, 0, 1, size - 1);
  } finally {
    await handle.close();
  }
}

test('a candidate written after it was hashed is refused, with or without its identity; the chain stays', async () => {
  for (const withIdentity of [true, false]) {
    const made = await candidate(`changed-${withIdentity}`);
    await flipLastByte(made.file);
    await assert.rejects(
      commitPreverifiedContribution(dataDir, CIRCUIT, {
        candidatePath: made.file,
        headIndex: 0,
        fileHash: made.fileHash,
        contributionHash: made.contributionHash,
        contributor: 'mallory',
        ...(withIdentity ? { hashedAs: made.hashedAs } : {}),
      }),
      (error) => isCoordinatorError(error, 'chain.file_hash_mismatch'),
    );
    assert.equal((await openCeremony(dataDir)).chains.get(CIRCUIT)!.headIndex, 0);
  }
});

test('an untouched candidate is committed with the hash it was verified under', async () => {
  const made = await candidate('untouched');
  const accepted = await commitPreverifiedContribution(dataDir, CIRCUIT, {
    candidatePath: made.file,
    headIndex: 0,
    fileHash: made.fileHash,
    contributionHash: made.contributionHash,
    contributor: 'alice',
    hashedAs: made.hashedAs,
  });
  assert.equal(accepted.index, 1);
  assert.equal(await hashFile(accepted.path), made.fileHash);
  const state = await openCeremony(dataDir);
  assert.equal(state.chains.get(CIRCUIT)!.headIndex, 1);
});
