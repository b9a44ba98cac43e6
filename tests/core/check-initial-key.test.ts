/**
 * checkInitialKey accepts the contribution 0 that `snarkjs zkey new` writes and refuses, naming the
 * part, a key made from another r1cs of the same shape or from another ptau, and a key with one
 * point of IC, A, B1, B2, L or H replaced by another valid curve point (its double), a changed
 * coefficient, a changed α or β, a point off the curve, or a wrong circuit hash. Read errors throw.
 * A B2 point with a component of small order added (outside G2's order-r subgroup, on the twist) is
 * refused with its own code; an r1cs whose section table names a section twice is refused. The
 * search for the culprit, once the combined check failed, reports itself and counts its own progress.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { finalisedCeremony } from '../fixtures/ceremony-fixture.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { checkInitialKey } from '../../core/audit/check-initial-key.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { getBn128 } from '../../core/crypto/bn128.ts';
import { readZkeyInfo, SECTION, type ZkeyInfo } from '../../core/zkey/zkey-file.ts';
import { tamperedCopy } from '../helpers/zkey-tamper.ts';
import type { CurveGroup } from 'ffjavascript';
import { snarkjsPtau } from '../helpers/snarkjs-ptau.ts';
import { SMALLEST_COFACTOR_PRIME, twistPointOfOrder, withComponent } from '../helpers/twist-points.ts';
import { writeR1cs, type R1csRow } from '../helpers/write-r1cs.ts';

const CIRCUIT = 'treeUpdate';
let scratch: string;
let r1csPath: string;
let ptauPath: string;
let zkeyPath: string;

before(async () => {
  const published = await finalisedCeremony();
  const circuit = published.config.circuits.find((c) => c.name === CIRCUIT)!;
  r1csPath = circuit.r1csPath;
  ptauPath = published.config.ptauPath;
  zkeyPath = ceremonyPaths(published.dataDir).zkeyPath(CIRCUIT, 0);
  scratch = await mkdtemp(path.join(tmpdir(), 'check-initial-key-'));
});

after(() => cleanUp(scratch));

let copies = 0;
async function copyOf(file: string): Promise<string> {
  const target = path.join(scratch, `copy-${copies++}-${path.basename(file)}`);
  await copyFile(file, target);
  return target;
}

/** A copy of the key with the low bit of its byte at `at(info)` flipped. */
async function flippedCopy(at: (info: ZkeyInfo) => number): Promise<string> {
  const key = await copyOf(zkeyPath);
  return tamperedCopy(key, key, (bytes, info) => {
    bytes[at(info)]! ^= 0x01;
  });
}

/** Asserts the check refuses with audit.initial_key_mismatch and a message naming `part`. */
async function assertRefused(key: string, part: string, r1cs = r1csPath, ptau = ptauPath): Promise<void> {
  await assert.rejects(checkInitialKey(key, r1cs, ptau), (error: Error & { code?: string }) => {
    assert.equal(error.code, 'audit.initial_key_mismatch', error.message);
    assert.match(error.message, new RegExp(`: ${part} `), error.message);
    return true;
  });
}

/** Replaces point `index` (or the first non-identity point from it) of a section with its double. */
async function doublePoint(file: string, section: number, group: 'G1' | 'G2', index = 0): Promise<void> {
  const curve = await getBn128();
  const G = curve[group] as CurveGroup;
  const size = group === 'G1' ? 64 : 128;
  const info = await readZkeyInfo(file);
  const location = info.sections.get(section)!;
  const bytes = await readFile(file);
  for (let i = index; (i + 1) * size <= location.size; i++) {
    const at = location.offset + i * size;
    const point = G.fromRprLEM(bytes, at);
    if (G.isZero(point)) continue;
    const doubled = new Uint8Array(size);
    G.toRprLEM(doubled, 0, G.toAffine(G.add(point, point)));
    bytes.set(doubled, at);
    await writeFile(file, bytes);
    return;
  }
  throw new Error(`section ${section} has no point to double`);
}

test('the contribution 0 that zkey new wrote passes, and the check returns its circuit hash', async () => {
  const fractions: number[] = [];
  const { csHash } = await checkInitialKey(zkeyPath, r1csPath, ptauPath, { onProgress: (f) => fractions.push(f) });
  assert.deepEqual(csHash, (await readZkeyInfo(zkeyPath)).mpc.csHash);
  assert.equal(fractions.at(-1), 1);
  assert.ok(
    fractions.every((f, i) => f >= 0 && f <= 1 && (i === 0 || f >= fractions[i - 1]!)),
    'progress only grows, within [0, 1]',
  );
});

test(
  'a key made from another r1cs of the same shape (one coefficient of C ' + 'changed) is refused in L or IC',
  async () => {
    // Constraint 0's first C term gets coefficient 2: same sizes, same A and B, another circuit.
    const other = await copyOf(r1csPath);
    const bytes = await readFile(other);
    let p = 12;
    let constraints = -1;
    for (let i = 0; i < bytes.readUInt32LE(8); i++) {
      const id = bytes.readUInt32LE(p);
      const size = Number(bytes.readBigUInt64LE(p + 4));
      if (id === 2) constraints = p + 12;
      p += 12 + size;
    }
    assert.ok(constraints > 0);
    let q = constraints;
    let signal = -1;
    let nPublic = 0;
    for (let c = 0; signal < 0; c++) {
      for (const matrix of ['A', 'B', 'C']) {
        const n = bytes.readUInt32LE(q);
        q += 4;
        if (matrix === 'C' && n > 0) {
          signal = bytes.readUInt32LE(q);
          bytes.fill(0, q + 4, q + 36);
          bytes[q + 4] = 2;
          break;
        }
        q += n * 36;
      }
    }
    await writeFile(other, bytes);
    nPublic = (await readZkeyInfo(zkeyPath)).header.nPublic;
    const key = path.join(scratch, 'other-r1cs.zkey');
    await snarkjs.zKey.newZKey(other, ptauPath, key);
    await assertRefused(key, signal <= nPublic ? 'IC' : 'L');
  },
);

test('a key made from another ptau (another secret) is refused', async () => {
  // A made-up circuit of 13 rows (10 constraints, 2 public inputs and the constant), a domain of 2^4,
  // on a ptau of power 4, its domain's as the smallest test circuit's (2^9) is its ptau's: the secret
  // is what differs, at any size. snarkjs's own ptau (its phase 2 preparation above all) costs about
  // 0.5 s of CPU at power 4 and 13 s at power 9.
  const r1cs = path.join(scratch, 'small.r1cs');
  await writeR1cs(r1cs, {
    nWires: 14,
    publicInputs: 2,
    constraints: Array.from({ length: 10 }, (_, i) => ({
      a: [[1 + (i % 3), BigInt(i + 1)]] as R1csRow,
      b: [[2 + i, 1n]] as R1csRow,
      c: [[3 + i, 1n]] as R1csRow,
    })),
  });
  const prepared = await snarkjsPtau(scratch, 'other', 4);
  const key = path.join(scratch, 'other-ptau.zkey');
  await snarkjs.zKey.newZKey(r1cs, prepared, key);
  await assertRefused(key, 'header', r1cs);
  // The same key is what that ptau makes: the check accepts it against its own inputs.
  await checkInitialKey(key, r1cs, prepared);
});

for (const [name, section, group] of [
  ['IC', SECTION.ic, 'G1'],
  ['A', SECTION.a, 'G1'],
  ['B1', SECTION.b1, 'G1'],
  ['B2', SECTION.b2, 'G2'],
  ['L', SECTION.l, 'G1'],
  ['H', SECTION.h, 'G1'],
] as const) {
  test(`one point of ${name} replaced by its double (a valid point) is refused, naming ${name}`, async () => {
    const key = await copyOf(zkeyPath);
    await doublePoint(key, section, group, 3);
    await assertRefused(key, name);
  });
}

test('the search for the culprit reports itself, counting from 0 to 1 (an L point: every part checked)', async () => {
  const key = await copyOf(zkeyPath);
  await doublePoint(key, SECTION.l, 'G1', 3);
  const events: Array<number | 'search'> = [];
  await assert.rejects(
    checkInitialKey(key, r1csPath, ptauPath, {
      onProgress: (fraction) => events.push(fraction),
      onCulpritSearch: () => events.push('search'),
    }),
    /: L /,
  );
  const start = events.indexOf('search');
  assert.ok(start > 0 && events.lastIndexOf('search') === start, 'announced once, after the check itself ran');
  const search = events.slice(start + 1) as number[];
  assert.equal(search[0], 0);
  assert.equal(search.at(-1), 1, 'the search counts every part it checks');
  assert.ok(
    search.every((f, i) => f >= 0 && f <= 1 && (i === 0 || f >= search[i - 1]!)),
    'the search only grows, within [0, 1]',
  );
});

test('a point of A off the curve is refused, naming A', async () => {
  const key = await flippedCopy((info) => info.sections.get(SECTION.a)!.offset + 64 * 5 + 7);
  await assertRefused(key, 'A');
});

test('a point of B2 off the curve is refused, naming B2 (its check runs beside the MSM, not before it)', async () => {
  const key = await flippedCopy((info) => info.sections.get(SECTION.b2)!.offset + 128 * 5 + 7);
  await assertRefused(key, 'B2');
});

test('a changed coefficient in section 4 is refused', async () => {
  // Entry 2's value (after the u32 count and two 44-byte entries, past matrix/constraint/signal).
  const key = await flippedCopy((info) => info.sections.get(SECTION.coefficients)!.offset + 4 + 2 * 44 + 12);
  await assertRefused(key, 'coefficients');
});

test('a changed α1 or β1 in the header is refused', async () => {
  for (const field of [0, 1]) {
    const key = await copyOf(zkeyPath);
    const info = await readZkeyInfo(key);
    const curve = await getBn128();
    const header = info.sections.get(SECTION.grothHeader)!;
    const at = header.offset + info.header.fixedPart.length - 2 * 64 - 2 * 128 + field * 64;
    const bytes = await readFile(key);
    const point = curve.G1.fromRprLEM(bytes, at);
    const doubled = new Uint8Array(64);
    curve.G1.toRprLEM(doubled, 0, curve.G1.toAffine(curve.G1.add(point, point)));
    bytes.set(doubled, at);
    await writeFile(key, bytes);
    await assertRefused(key, 'header');
  }
});

test('another file version is refused', async () => {
  const key = await copyOf(zkeyPath);
  const bytes = await readFile(key);
  bytes.writeUInt32LE(2, 4);
  await writeFile(key, bytes);
  await assertRefused(key, 'header');
});

test('a wrong circuit hash is refused', async () => {
  const key = await flippedCopy((info) => info.sections.get(SECTION.mpc)!.offset + 10);
  await assertRefused(key, 'circuit hash');
});

test('a truncated key or r1cs throws a read error, never passes', async () => {
  const key = await copyOf(zkeyPath);
  await truncate(key, (await readFile(key)).length - 100);
  await assert.rejects(
    checkInitialKey(key, r1csPath, ptauPath),
    (error: Error & { code?: string }) => error.code === 'zkey.malformed',
  );
  const r1cs = await copyOf(r1csPath);
  await truncate(r1cs, (await readFile(r1cs)).length - 1000);
  await assert.rejects(
    checkInitialKey(zkeyPath, r1cs, ptauPath),
    (error: Error & { code?: string }) => error.code === 'r1cs.malformed' || error.code === 'chain.file_unreadable',
  );
});

test('a B2 point with a component of order 10069 added is refused as outside the subgroup (its own code)', async () => {
  const curve = await getBn128();
  const key = await copyOf(zkeyPath);
  const info = await readZkeyInfo(key);
  const bytes = await readFile(key);
  const b2 = info.sections.get(SECTION.b2)!;
  // The first point that is not the identity (a signal that appears in B).
  let at = b2.offset;
  while (bytes.subarray(at, at + 128).every((byte) => byte === 0)) at += 128;
  bytes.set(withComponent(curve, bytes.subarray(at, at + 128), twistPointOfOrder(curve, SMALLEST_COFACTOR_PRIME)), at);
  await writeFile(key, bytes);
  await assert.rejects(checkInitialKey(key, r1csPath, ptauPath), (error: Error & { code?: string }) => {
    assert.equal(error.code, 'audit.b2_outside_subgroup', error.message);
    assert.match(error.message, /B2 has points outside the order-r subgroup/);
    return true;
  });
});

test('an r1cs that lists a section twice is refused (the second copy is never silently ignored)', async () => {
  const r1cs = await copyOf(r1csPath);
  const bytes = await readFile(r1cs);
  // Append a copy of the constraints section (id 2) and count it in the header.
  let p = 12;
  let copy: Buffer | undefined;
  for (let i = 0; i < bytes.readUInt32LE(8); i++) {
    const size = Number(bytes.readBigUInt64LE(p + 4));
    if (bytes.readUInt32LE(p) === 2) copy = Buffer.from(bytes.subarray(p, p + 12 + size));
    p += 12 + size;
  }
  assert.ok(copy);
  const doubled = Buffer.concat([bytes, copy]);
  doubled.writeUInt32LE(bytes.readUInt32LE(8) + 1, 8);
  await writeFile(r1cs, doubled);
  await assert.rejects(checkInitialKey(zkeyPath, r1cs, ptauPath), (error: Error & { code?: string }) => {
    assert.equal(error.code, 'r1cs.malformed', error.message);
    assert.match(error.message, /section 2 appears twice/);
    return true;
  });
});
