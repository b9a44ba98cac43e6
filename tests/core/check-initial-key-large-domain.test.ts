/**
 * The audit's check of contribution 0 at a domain above 2^14 and as large as its ptau (2^15 on a
 * power-15 ptau), which the project's test circuits never reach: there snarkjs hashes H's
 * differences in whole 2^14-point chunks, the last of which reads one "point" past the end of ptau
 * section 2, and the circuit hash comes out right only if that pair is taken as snarkjs takes it
 * (the kernel-only path refused every real-size key with "circuit hash"). About 80 s on first run
 * (the ptau is cached in the fixture cache).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { generateMultiplicationCircuit } from '../../bench/generate-circuit.ts';
import { checkInitialKey } from '../../core/audit/check-initial-key.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { devPtau } from '../fixtures/ceremony-fixture.ts';

let scratch: string;

before(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'check-initial-key-2p15-'));
});

after(async () => {
  await rm(scratch, { recursive: true, force: true });
  await releaseBn128();
});

test('contribution 0 of a 2^15 circuit on a power-15 ptau is accepted, circuit hash included', async () => {
  const ptau = await devPtau(15);
  // 16,400 constraints + 2 public rows: a domain of 2^15.
  const r1cs = await generateMultiplicationCircuit(16_400, scratch);
  const zkey = path.join(scratch, 'z0.zkey');
  await snarkjs.zKey.newZKey(r1cs, ptau, zkey);
  // Refused with "circuit hash is not the hash of the key's points" before the fix.
  const { csHash } = await checkInitialKey(zkey, r1cs, ptau);
  assert.equal(csHash.length, 64);
});
