/**
 * Contribution 0 on the kernel (core/ceremony/initial-key-writer.ts) is byte for byte what
 * snarkjs's `zkey new` writes: on each of the project's nine test circuits, and on a made-up r1cs
 * whose coefficients take every path of the kernel (1 and −1, small, full-width, just below and
 * above (r − 1)/2, not reduced below r, zero) with repeated and unused signals. The hashes it
 * returns are the file's and each section's; a bad r1cs is refused with its code. snarkjs's keys
 * are its own `zkey new`'s, kept in the fixture cache (snarkjsInitialKey) by the hashes of the r1cs
 * and the ptau: the same bytes, without snarkjs's 6 s of CPU on every run.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeInitialKey } from '../../core/ceremony/initial-key-writer.ts';
import { ComposePool } from '../../core/kernel/compose-pool.ts';
import { hashFile } from '../../core/crypto/file-hash.ts';
import { BN254_R } from '../../core/crypto/bn254-moduli.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { readZkeyInfo } from '../../core/zkey/zkey-file.ts';
import { CoordinatorError } from '../../core/errors.ts';
import { devPtau, PROJECT_CIRCUITS, PROJECT_DATA_DIR } from '../fixtures/ceremony-fixture.ts';
import { snarkjsInitialKey } from '../helpers/snarkjs-initial-key.ts';
import { writeR1cs, type R1csConstraint, type R1csRow } from '../helpers/write-r1cs.ts';

let dir: string;
let pool: ComposePool;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'initial-key-'));
  pool = await ComposePool.start();
});

after(async () => {
  await pool.close();
  await releaseBn128();
  await rm(dir, { recursive: true, force: true });
});

/** Writes the kernel's key and returns its bytes and snarkjs's (made once, from the fixture cache). */
async function bothKeys(r1cs: string, ptau: string, name: string): Promise<{ kernel: Buffer; snarkjs: Buffer }> {
  const mine = path.join(dir, `${name}.kernel.zkey`);
  const written = await writeInitialKey(r1cs, ptau, mine, { pool });
  const theirs = await snarkjsInitialKey(r1cs, ptau);
  assert.equal(written.fileHash, await hashFile(mine), `${name}: the returned file hash is the file's`);
  const kernel = await readFile(mine);
  const info = await readZkeyInfo(mine);
  assert.equal(written.sectionHashes.size, 10);
  for (const [id, location] of info.sections) {
    const bytes = kernel.subarray(location.offset, location.offset + location.size);
    assert.equal(
      written.sectionHashes.get(id),
      createHash('blake2b512').update(bytes).digest('hex'),
      `${name}: section ${id}'s hash`,
    );
  }
  assert.ok(written.csHash.equals(info.mpc.csHash));
  return { kernel, snarkjs: await readFile(theirs) };
}

function firstDifference(a: Buffer, b: Buffer): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : Math.min(a.length, b.length);
}

test('every test circuit: the kernel writes the key snarkjs zkey new writes, byte for byte', async () => {
  const ptau = await devPtau();
  for (const circuit of PROJECT_CIRCUITS) {
    const r1cs = path.join(PROJECT_DATA_DIR, 'circuits', `${circuit}.r1cs`);
    const keys = await bothKeys(r1cs, ptau, circuit);
    assert.equal(firstDifference(keys.kernel, keys.snarkjs), -1, `${circuit}: first differing byte`);
  }
});

/** A deterministic stream of 32-bit values (xorshift), so the made-up circuit is the same every run. */
function numbers(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>>= 0);
  };
}

test('coefficients of every kind and signals repeated or unused: still byte for byte snarkjs', async () => {
  const next = numbers(35);
  const wide = (): bigint => {
    let v = 0n;
    for (let i = 0; i < 8; i++) v = (v << 32n) | BigInt(next());
    return v;
  };
  const half = (BN254_R - 1n) / 2n;
  const kinds: Array<() => bigint> = [
    () => 1n,
    () => BN254_R - 1n,
    () => BigInt(2 + (next() % 9)),
    () => BN254_R - BigInt(2 + (next() % 9)),
    () => wide() % BN254_R,
    () => half,
    () => half + 1n,
    () => BN254_R + BigInt(next() % 5), // not reduced: snarkjs reduces it
    () => 0n,
  ];
  const nWires = 40;
  const publicInputs = 3;
  // Signals 37 to 39 appear nowhere; 36 only in C (its A, B1, B2 points are at infinity).
  const signal = (): number => next() % 36;
  const row = (terms: number): R1csRow =>
    Array.from({ length: terms }, () => [signal(), kinds[next() % kinds.length]!()] as [number, bigint]);
  const constraints: R1csConstraint[] = Array.from({ length: 60 }, (_, i) => ({
    a: row(1 + (i % 4)),
    b: row(i % 3),
    c: [...row(i % 2), [36, 7n]],
  }));
  // The same signal twice in one row, with opposite coefficients that cancel, and with equal ones.
  constraints.push({
    a: [
      [5, 3n],
      [5, BN254_R - 3n],
      [6, 9n],
      [6, 9n],
    ],
    b: [[7, 1n]],
    c: [],
  });
  const r1cs = path.join(dir, 'made-up.r1cs');
  await writeR1cs(r1cs, { nWires, publicInputs, constraints });
  const keys = await bothKeys(r1cs, await devPtau(), 'made-up');
  assert.equal(firstDifference(keys.kernel, keys.snarkjs), -1, 'first differing byte');
});

test('a constraint longer than a chunk of the writer (2 MB of terms) still gives the bytes of snarkjs', async () => {
  const next = numbers(22);
  const long: R1csRow = Array.from(
    { length: 60_000 },
    () => [next() % 30, BigInt(1 + (next() % 1000))] as [number, bigint],
  );
  const constraints: R1csConstraint[] = [
    { a: [[1, 1n]], b: [[2, 1n]], c: [[3, 1n]] },
    { a: long, b: [[4, 2n]], c: [[5, 1n]] },
    { a: [[6, 1n]], b: long.slice(0, 10), c: [[7, BN254_R - 1n]] },
  ];
  const r1cs = path.join(dir, 'long.r1cs');
  await writeR1cs(r1cs, { nWires: 30, publicInputs: 2, constraints });
  const keys = await bothKeys(r1cs, await devPtau(), 'long');
  assert.equal(firstDifference(keys.kernel, keys.snarkjs), -1, 'first differing byte');
});

test('an r1cs naming a signal it does not have is refused as malformed', async () => {
  const r1cs = path.join(dir, 'bad-signal.r1cs');
  await writeR1cs(r1cs, {
    nWires: 5,
    publicInputs: 1,
    constraints: [
      { a: [[1, 1n]], b: [[2, 1n]], c: [[3, 1n]] },
      { a: [[1, 1n]], b: [[9, 1n]], c: [[4, 1n]] },
    ],
  });
  await assert.rejects(
    writeInitialKey(r1cs, await devPtau(), path.join(dir, 'bad.zkey'), { pool }),
    (error: unknown) =>
      error instanceof CoordinatorError && error.code === 'r1cs.malformed' && /constraint 1\b/.test(error.message),
  );
});
