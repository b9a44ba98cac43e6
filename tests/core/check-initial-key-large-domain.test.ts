/**
 * The audit's check of contribution 0 at a domain above 2^14 and as large as its ptau (2^15 on a
 * power-15 ptau), which the project's test circuits never reach: there snarkjs hashes H's
 * differences in whole 2^14-point chunks, the last of which reads one "point" past the end of ptau
 * section 2, and the circuit hash comes out right only if that pair is taken as snarkjs takes it
 * (the kernel-only path refused every real-size key with "circuit hash"). snarkjs's `zkey new` of
 * that circuit costs about 14 s of CPU and gives the same bytes every time: the key and its r1cs
 * are made once and kept in the fixture cache, named by snarkjs's version (about 80 s on the very
 * first run, the power-15 ptau included); the check runs on every run.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { generateMultiplicationCircuit } from '../../bench/generate-circuit.ts';
import { checkInitialKey } from '../../core/audit/check-initial-key.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { devPtau, FIXTURE_CACHE, REPO_ROOT } from '../fixtures/ceremony-fixture.ts';

after(async () => {
  await releaseBn128();
});

const SNARKJS_VERSION: string = JSON.parse(
  readFileSync(path.join(REPO_ROOT, 'node_modules', 'snarkjs', 'package.json'), 'utf8'),
).version;

/** The 2^15 circuit's r1cs and snarkjs's contribution 0 of it on the power-15 dev ptau, from the cache. */
async function largeDomainKey(ptau: string): Promise<{ r1cs: string; zkey: string }> {
  const dir = path.join(FIXTURE_CACHE, `snarkjs-zkey-2p15-${SNARKJS_VERSION}`);
  const cached = { r1cs: path.join(dir, 'circuit.r1cs'), zkey: path.join(dir, 'z0.zkey') };
  if (
    await stat(cached.zkey).then(
      () => true,
      () => false,
    )
  )
    return cached;
  // Made beside its final place, renamed whole: a test process running beside this one sees it or not.
  await mkdir(FIXTURE_CACHE, { recursive: true });
  const making = await mkdtemp(path.join(FIXTURE_CACHE, 'making-2p15-'));
  // 16,400 constraints + 12 public inputs + 1: a domain of 2^15.
  const r1cs = await generateMultiplicationCircuit(16_400, making);
  await rename(r1cs, path.join(making, 'circuit.r1cs'));
  await snarkjs.zKey.newZKey(path.join(making, 'circuit.r1cs'), ptau, path.join(making, 'z0.zkey'));
  await rename(making, dir).catch(async (error: NodeJS.ErrnoException) => {
    // Another test process cached it first: keep theirs.
    if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
  });
  await rm(making, { recursive: true, force: true });
  return cached;
}

test('contribution 0 of a 2^15 circuit on a power-15 ptau is accepted, circuit hash included', async () => {
  const ptau = await devPtau(15);
  const { r1cs, zkey } = await largeDomainKey(ptau);
  // Refused with "circuit hash is not the hash of the key's points" before the fix.
  const { csHash } = await checkInitialKey(zkey, r1cs, ptau);
  assert.equal(csHash.length, 64);
});
