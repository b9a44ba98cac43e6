/**
 * The kernel's G1 MSM (g1-msm.c, one thread, and g1MultiExp on the thread pool) against
 * ffjavascript's multiExpAffine: the cases of tests/helpers/msm-cases.ts (random inputs of several
 * sizes, the bucket tree's odd counts and the split across threads, with 8- and 32-byte scalars;
 * points at infinity, zero scalars, repeated points, P with −P, r−1, identity sums), and what is
 * G1's alone here: the window choice, callers' Buffers, and a process that used g1MultiExp exits
 * without closing it. And the reduced-radix MSM (msm, g1-msm.c) against the key field's (msm_fq32,
 * g1-compose.c), byte for byte: random inputs across bucket groups, a bucket of one point repeated
 * (doublings), P with −P, points at infinity, coordinates near 0 and near q, scalars 0 and all ones;
 * and the checked MSM's verdicts on the same inputs, good and spoilt.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BN254_Q } from '../../core/crypto/bn254-moduli.ts';
import { msmWindowBits, scalarBitLength } from '../../core/kernel/msm-kernel.ts';
import { g1CheckedMultiExp, g1MultiExp, g1MultiExpOrFallback } from '../../core/kernel/multi-exp.ts';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { defineMsmCases, msmSuite, randomScalars, scalarBytesOf } from '../helpers/msm-cases.ts';

const g1 = msmSuite('G1');

describe('G1 MSM kernel', () => {
  defineMsmCases({
    widths: [8, 32],
    sizes: [1, 2, 3, 17, 8191, 8193, 10_000],
    repeated: 9000,
    suite: g1,
    multiExp: g1MultiExp,
    multiExpOrFallback: g1MultiExpOrFallback,
  });

  it('sizes its windows from the scalars actually given', () => {
    const scalars = new Uint8Array(64);
    assert.equal(scalarBitLength(scalars, 32), 0);
    scalars[32 + 3] = 0x05;
    assert.equal(scalarBitLength(scalars, 32), 27);
    scalars[31] = 0x30;
    assert.equal(scalarBitLength(scalars, 32), 254);
    assert.ok(msmWindowBits(1 << 16, 64) > msmWindowBits(64, 64));
  });

  it("leaves a caller's Buffer usable (its slices are views: they must be copied, not transferred)", async () => {
    const n = 9000;
    const bases = Buffer.from(g1.randomBases(n));
    const scalars = Buffer.from(randomScalars(n, 8));
    const before = Buffer.from(bases);
    const expected = await g1.G.multiExpAffine(new Uint8Array(bases), new Uint8Array(scalars));
    assert.ok(g1.samePoint(await g1MultiExp(bases, scalars, 8), expected));
    assert.equal(bases.byteLength, n * 64);
    assert.deepEqual(bases, before);
  });

  it('lets a process that used it exit without closing it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'g1-msm-exit-'));
    const script = path.join(dir, 'use-msm.mts');
    const moduleUrl = (relative: string): string => pathToFileURL(path.join(REPO_ROOT, relative)).href;
    writeFileSync(
      script,
      [
        `const { g1MultiExp } = await import('${moduleUrl('core/kernel/multi-exp.ts')}');`,
        `const { releaseBn128 } = await import('${moduleUrl('core/crypto/bn128.ts')}');`,
        'const p = await g1MultiExp(new Uint8Array(64), new Uint8Array(8), 8);',
        'await releaseBn128();',
        "console.log('summed', p.length);",
      ].join('\n'),
    );
    after(() => rmSync(dir, { recursive: true, force: true }));
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    // Bounded wait: a process kept alive by the threads is killed and fails the test.
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('exit', (c, s) => resolve([c, s])),
    );
    clearTimeout(timer);
    assert.equal(signal, null, `the process had to be killed; output:\n${output}`);
    assert.equal(code, 0, output);
    assert.match(output, /summed 96/);
  });
});

function modPow(base: bigint, exponent: bigint): bigint {
  let result = 1n;
  for (let b = base % BN254_Q; exponent > 0n; exponent >>= 1n, b = (b * b) % BN254_Q)
    if (exponent & 1n) result = (result * b) % BN254_Q;
  return result;
}

/**
 * Points of G1 (cofactor 1: every point of the curve) whose x, as the key stores it (Montgomery
 * form, a·2^256 mod q), is q − k or k for small k, and whose stored y is the larger of its two
 * signs, so near q: the extremes of what the key's layout holds.
 */
function pointsNearTheEdges(count: number): Uint8Array {
  const r = 1n << 256n;
  const rInverse = modPow(r, BN254_Q - 2n);
  const out = new Uint8Array(count * 64);
  let found = 0;
  for (let k = 1n; found < count; k++) {
    const stored = found % 2 === 0 ? BN254_Q - k : k;
    const x = (stored * rInverse) % BN254_Q;
    const rhs = (x * x * x + 3n) % BN254_Q;
    const y = modPow(rhs, (BN254_Q + 1n) / 4n); // q ≡ 3 mod 4
    if ((y * y) % BN254_Q !== rhs) continue;
    const storedY = (y * r) % BN254_Q;
    out.set(scalarBytesOf(stored, 32), found * 64);
    out.set(scalarBytesOf(storedY > BN254_Q / 2n ? storedY : BN254_Q - storedY, 32), found * 64 + 32);
    found++;
  }
  return out;
}

describe('G1 MSM in the reduced radix against the key field', () => {
  /** msm and msm_fq32 give the same bytes, and their sum is ffjavascript's. */
  const assertSameAsKeyField = async (bases: Uint8Array, scalars: Uint8Array, width: number, what: string) => {
    const reducedRadix = g1.kernel.multiExpParts(bases, scalars, width, 'G1');
    const keyField = g1.kernel.multiExpParts(bases, scalars, width, 'G1', undefined, true);
    assert.deepEqual(reducedRadix, keyField, `the same bytes: ${what}`);
    assert.ok(g1.samePoint(g1.sumOfParts(reducedRadix), await g1.G.multiExpAffine(bases, scalars)), what);
  };

  it("gives the key field's bytes on random inputs, one bucket group and several", async () => {
    for (const width of [8, 16, 32])
      for (const n of [1, 2, 3, 17, 1000, 40_000])
        await assertSameAsKeyField(g1.randomBases(n), randomScalars(n, width), width, `${n} points, ${width} bytes`);
  });

  it('gives them on a bucket of equal points past a group, sums met twice, P with −P, the identity', async () => {
    const distinct = g1.randomBases(3);
    const n = 40_000;
    const bases = new Uint8Array(n * 64);
    for (let i = 0; i < n; i++) bases.set(g1.pointAt(distinct, i % 3 === 0 ? 0 : 1), i * 64);
    const same = new Uint8Array(n * 8).fill(0x37);
    await assertSameAsKeyField(bases, same, 8, 'one scalar: each window one bucket of equal points');
    // A, B, B, A: the first round makes A + B and B + A, equal points whose coordinates come out
    // of different subtractions, so possibly as different representatives (v and v + q) of the
    // lazy range; the next round must still see them as equal and double.
    const crossed = new Uint8Array(4096 * 64);
    for (let i = 0; i < 4096; i++) crossed.set(g1.pointAt(distinct, i % 4 === 0 || i % 4 === 3 ? 0 : 1), i * 64);
    await assertSameAsKeyField(crossed, new Uint8Array(4096 * 8).fill(0x11), 8, 'A + B met as B + A');
    const pairs = new Uint8Array(8 * 64);
    for (let i = 0; i < 8; i += 2) {
      pairs.set(g1.pointAt(distinct, 2), i * 64);
      pairs.set(g1.negated(g1.pointAt(distinct, 2)), (i + 1) * 64);
    }
    const pairScalars = new Uint8Array(8 * 16).fill(0xc3);
    await assertSameAsKeyField(pairs, pairScalars, 16, 'P with −P: the identity');
    assert.ok(g1.G.isZero(g1.sumOfParts(g1.kernel.multiExpParts(pairs, pairScalars, 16))), 'P·s + (−P)·s is zero');
  });

  it('gives them on points at infinity, coordinates near 0 and near q, scalars 0 and all ones', async () => {
    const edges = pointsNearTheEdges(16);
    const random = g1.randomBases(48);
    const bases = new Uint8Array(64 * 64);
    bases.set(edges, 0);
    bases.set(random, 16 * 64);
    for (let i = 5; i < 64; i += 9) bases.fill(0, i * 64, (i + 1) * 64);
    for (const width of [8, 16, 32]) {
      const scalars = randomScalars(64, width);
      for (let i = 0; i < 64; i += 4) scalars.fill(0, i * width, (i + 1) * width);
      for (let i = 1; i < 64; i += 4) scalars.fill(0xff, i * width, (i + 1) * width);
      await assertSameAsKeyField(bases, scalars, width, `edges, ${width}-byte scalars`);
      await assertSameAsKeyField(edges, new Uint8Array(16 * width).fill(0xff), width, `all ones, ${width} bytes`);
      await assertSameAsKeyField(bases, new Uint8Array(64 * width), width, `all zero, ${width} bytes`);
    }
  });

  it('the checked MSM sums the points near q and still finds a point off the curve or not canonical', async () => {
    const bases = new Uint8Array(300 * 64);
    bases.set(pointsNearTheEdges(16), 0);
    bases.set(g1.randomBases(284), 16 * 64);
    const scalars = randomScalars(300, 8);
    const checked = await g1CheckedMultiExp(bases, scalars, 8);
    assert.ok('sum' in checked && g1.samePoint(checked.sum, await g1.G.multiExpAffine(bases, scalars)));
    const offCurve = bases.slice();
    offCurve[7 * 64 + 32]! ^= 1;
    assert.deepEqual(await g1CheckedMultiExp(offCurve, scalars, 8), { invalidPoint: 7 });
    // A point near q with y encoded as y + q (below 2^256, as q < 2^254): the same residue, refused.
    const at = bases.subarray(2 * 64, 3 * 64);
    let y = 0n;
    for (let b = 31; b >= 0; b--) y = (y << 8n) | BigInt(at[32 + b]!);
    const spoilt = bases.slice();
    spoilt.set(scalarBytesOf(y + BN254_Q, 32), 2 * 64 + 32);
    assert.deepEqual(await g1CheckedMultiExp(spoilt, scalars, 8), { invalidPoint: 2 });
  });
});
