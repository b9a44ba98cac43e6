/**
 * The kernel's G2 MSM (g2-msm.c, one thread, and g2MultiExp on the thread pool) against
 * ffjavascript's G2.multiExpAffine: the cases of tests/helpers/msm-cases.ts (random inputs of
 * several sizes up to past the pool's split, 16-byte scalars as the audit's check of contribution
 * 0 uses and 32-byte ones; points at infinity, zero scalars, repeated points, P with −P, one scalar
 * for many points, r−1, identity sums, a doubling with y = 0), and points of the twist outside the
 * order-r subgroup, which B2 may hold and the check's [r]·T = 0 must still see. The window sums
 * (g2_msm_windows, g2WindowSums, and ffjavascript's fallback) against sums recomputed from the
 * digits, and the subgroup test they serve: a point with a component of order 10069, under a scalar
 * that hides it from [r]·T = 0, is still seen by [r]·W = 0 for some window W, as [r]·P ≠ 0 sees it.
 * And the reduced-radix MSM (g2_msm, g2-msm.c) against the key field's (g2_msm_fq32, g2-compose.c),
 * byte for byte, on random subgroup and twist points, repeated points, P with −P and the identity.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BN254_R } from '../../core/crypto/bn254-moduli.ts';
import { MAX_SUBGROUP_WINDOW_BITS, msmWindowCount } from '../../core/kernel/msm-kernel.ts';
import {
  ffjavascriptG2WindowSums,
  g2MultiExp,
  g2MultiExpOrFallback,
  g2WindowSums,
} from '../../core/kernel/multi-exp.ts';
import { firstPointOffCurve, type CurveMainThread } from '../../core/zkey/point-checks.ts';
import { defineMsmCases, msmSuite, randomScalars, scalarBytesOf } from '../helpers/msm-cases.ts';
import {
  randomTwistPoint,
  SMALLEST_COFACTOR_PRIME,
  twistPointOfOrder,
  withComponent,
} from '../helpers/twist-points.ts';

const g2 = msmSuite('G2');

describe('G2 MSM kernel', () => {
  defineMsmCases({
    widths: [16, 32],
    sizes: [1, 2, 3, 17, 2731, 5000],
    repeated: 4500,
    suite: g2,
    multiExp: g2MultiExp,
    multiExpOrFallback: g2MultiExpOrFallback,
  });

  it('sums twist points outside the order-r subgroup like ffjavascript, so [r]·sum still exposes them', async () => {
    const n = 3000;
    const bases = g2.randomBases(n);
    for (let i = 0; i < n; i += 97) bases.set(randomTwistPoint(g2.curve), i * 128);
    assert.equal(
      firstPointOffCurve(g2.curve as unknown as CurveMainThread, 'G2', bases),
      -1,
      'every point is on the twist',
    );
    const scalars = randomScalars(n, 16);
    const expected = await g2.G.multiExpAffine(bases, scalars);
    const sum = await g2MultiExp(bases, scalars, 16);
    assert.ok(g2.samePoint(g2.sumOfParts(g2.kernel.multiExpParts(bases, scalars, 16, 'G2')), expected), 'one thread');
    assert.ok(g2.samePoint(sum, expected), 'pool');
    assert.ok(!g2.G.isZero(g2.G.timesScalar(sum, BN254_R)), 'the sum is outside the subgroup');
  });
});

/** Σ_w 2^(c·w)·W_w: the sum the window sums stand for. */
function fromWindows(windows: Uint8Array[], c: number): Uint8Array {
  let sum = g2.G.zero;
  for (const window of [...windows].reverse()) {
    for (let bit = 0; bit < c; bit++) sum = g2.G.add(sum, sum);
    sum = g2.G.add(sum, window);
  }
  return sum;
}

/** The kernel's signed digits (pippenger-msm.h's msm_digits) of one little-endian scalar, recomputed with bigints. */
function signedDigits(scalar: Uint8Array, c: number, windows: number): bigint[] {
  let value = 0n;
  for (let i = scalar.length - 1; i >= 0; i--) value = (value << 8n) | BigInt(scalar[i]!);
  const digits: bigint[] = [];
  let carry = 0n;
  for (let w = 0; w < windows; w++) {
    let d = ((value >> BigInt(c * w)) & ((1n << BigInt(c)) - 1n)) + carry;
    carry = 0n;
    if (w + 1 < windows && d > 1n << BigInt(c - 1)) {
      d -= 1n << BigInt(c);
      carry = 1n;
    }
    digits.push(d);
  }
  return digits;
}

const inSubgroup = (point: Uint8Array): boolean => g2.G.isZero(g2.G.timesScalar(point, BN254_R));

describe('G2 window sums and the subgroup test of B2', () => {
  it(
    "each window sum is the combination of the points with that window's " +
      'signed digits, on one thread and on the pool',
    async () => {
      for (const [n, c] of [
        [1, 2],
        [37, 13],
        [3000, 12],
        [5000, 9],
      ] as const) {
        const bases = g2.randomBases(n);
        const scalars = randomScalars(n, 16);
        const windows = msmWindowCount(128, c);
        const digits = Array.from({ length: n }, (_, i) =>
          signedDigits(scalars.subarray(16 * i, 16 * i + 16), c, windows),
        );
        const pool = await g2WindowSums(bases, scalars, 16, c);
        const oneThread = g2.kernel.g2WindowSumParts(bases, scalars, 16, c);
        assert.equal(pool.length, windows);
        // Each window against its own reference MSM on the small cases; on the large ones the first,
        // a middle and the last: Σ 2^(c·w)·W_w below checks every window of both paths (a wrong
        // window W_w moves the sum by 2^(c·w)·Δ, never zero in the order-r group).
        const checked = n < 1000 ? [...pool.keys()] : [0, windows >> 1, windows - 1];
        // The reference takes a negative digit d·P as |d|·(−P): the same combination, with scalars of
        // the digits' few bits instead of field elements (whose 256 bits ffjavascript's MSM pays for).
        const negatedBases = new Uint8Array(bases.byteLength);
        for (let i = 0; i < n; i++) negatedBases.set(g2.negated(g2.pointAt(bases, i)), i * 128);
        for (const w of checked) {
          const signedBases = new Uint8Array(n * 128);
          const magnitudes = new Uint8Array(n * 2);
          for (let i = 0; i < n; i++) {
            const d = digits[i]![w]!;
            signedBases.set(g2.pointAt(d < 0n ? negatedBases : bases, i), i * 128);
            magnitudes.set(scalarBytesOf(d < 0n ? -d : d, 2), 2 * i);
          }
          const expected = await g2.G.multiExpAffine(signedBases, magnitudes);
          assert.ok(g2.samePoint(pool[w]!, expected), `pool, ${n} points, window ${w} of ${c} bits`);
          const part = oneThread.subarray(w * 128, (w + 1) * 128);
          assert.ok(g2.samePoint(g2.sumOfParts(part), expected), `one thread, ${n} points, window ${w} of ${c} bits`);
        }
        const sum = await g2.G.multiExpAffine(bases, scalars);
        assert.ok(g2.samePoint(fromWindows(pool, c), sum), `Σ 2^(c·w)·W_w is the sum (${n} points)`);
        const oneThreadWindows = Array.from({ length: windows }, (_, w) =>
          g2.sumOfParts(oneThread.subarray(w * 128, (w + 1) * 128)),
        );
        assert.ok(g2.samePoint(fromWindows(oneThreadWindows, c), sum), `one thread: Σ is the sum (${n} points)`);
        assert.ok(
          g2.samePoint(fromWindows(await ffjavascriptG2WindowSums(bases, scalars, 16, c), c), sum),
          `the fallback's windows too (${n} points)`,
        );
      }
      assert.ok(
        g2.G.isZero(fromWindows(await g2WindowSums(new Uint8Array(0), new Uint8Array(0), 16, 12), 12)),
        'no points',
      );
      await assert.rejects(
        g2WindowSums(g2.randomBases(1), randomScalars(1, 16), 16, MAX_SUBGROUP_WINDOW_BITS + 1),
        RangeError,
      );
    },
  );

  it(
    'a point with a component of order 10069 under a scalar ≡ 0 mod 10069: ' + '[r]·T = 0 misses it, a window does not',
    async () => {
      const n = 4000;
      const small = twistPointOfOrder(g2.curve, SMALLEST_COFACTOR_PRIME);
      assert.ok(
        !inSubgroup(small) && g2.G.isZero(g2.G.timesScalar(small, SMALLEST_COFACTOR_PRIME)),
        'a point of order 10069',
      );
      const bases = g2.randomBases(n);
      const bad = 1234;
      bases.set(withComponent(g2.curve, g2.pointAt(bases, bad), small), bad * 128);
      // The naive test, point by point: only the changed point is outside the subgroup.
      for (const i of [0, bad - 1, bad, bad + 1, n - 1])
        assert.equal(inSubgroup(g2.G.fromRprLEM(bases, i * 128)), i !== bad, `[r]·P_${i}`);
      const scalars = randomScalars(n, 16);
      const hiding =
        (BigInt(`0x${Buffer.from(randomScalars(1, 15)).toString('hex')}`) % ((1n << 128n) / SMALLEST_COFACTOR_PRIME)) *
        SMALLEST_COFACTOR_PRIME;
      scalars.set(scalarBytesOf(hiding, 16), bad * 16);
      assert.ok(
        inSubgroup(await g2MultiExp(bases, scalars, 16)),
        'the single combination is in the subgroup: the old test passes this key',
      );
      for (const c of [MAX_SUBGROUP_WINDOW_BITS, 12, 9]) {
        const windows = await g2WindowSums(bases, scalars, 16, c);
        assert.ok(
          windows.some((window) => !inSubgroup(window)),
          `a window of ${c} bits sees the component`,
        );
        assert.ok(
          !(await ffjavascriptG2WindowSums(bases, scalars, 16, c)).every(inSubgroup),
          `the fallback's windows of ${c} bits see it`,
        );
      }
      // Without the component every window is in the subgroup.
      const clean = g2.randomBases(n);
      assert.ok((await g2WindowSums(clean, scalars, 16, 12)).every(inSubgroup), 'subgroup points: every window passes');
    },
  );

  it('random twist points (components of every order) are seen by the windows under random scalars', async () => {
    const n = 2000;
    const bases = g2.randomBases(n);
    for (let i = 5; i < n; i += 401) bases.set(randomTwistPoint(g2.curve), i * 128);
    for (let i = 5; i < n; i += 401) assert.ok(!inSubgroup(g2.G.fromRprLEM(bases, i * 128)), `[r]·P_${i} ≠ 0`);
    assert.ok((await g2WindowSums(bases, randomScalars(n, 16), 16, 12)).some((window) => !inSubgroup(window)));
  });
});

describe('G2 MSM in the reduced radix against the key field', () => {
  it("gives the key field's bytes: random points, twist points off the subgroup, P with −P, repeats", async () => {
    const twist = Array.from({ length: 8 }, () => randomTwistPoint(g2.curve));
    for (const n of [1, 5, 600, 9000]) {
      const bases = g2.randomBases(n);
      for (let i = 0; i < n; i += 7) bases.set(twist[i % 8]!, i * 128);
      for (let i = 3; i < n; i += 11) bases.fill(0, i * 128, (i + 1) * 128);
      for (let i = 1; i + 1 < n; i += 13) bases.set(g2.negated(g2.pointAt(bases, i)), (i + 1) * 128);
      for (let i = 5; i < n; i += 17) bases.set(g2.pointAt(bases, 0), i * 128);
      for (const width of [8, 16, 32]) {
        const scalars = randomScalars(n, width);
        for (let i = 2; i + 1 < n; i += 13) scalars.copyWithin((i + 1) * width, i * width, (i + 1) * width);
        for (let i = 4; i < n; i += 9) scalars.fill(i % 2 ? 0xff : 0, i * width, (i + 1) * width);
        const reducedRadix = g2.kernel.multiExpParts(bases, scalars, width, 'G2');
        const keyField = g2.kernel.multiExpParts(bases, scalars, width, 'G2', undefined, true);
        assert.deepEqual(reducedRadix, keyField, `${n} points, ${width}-byte scalars`);
        const expected = await g2.G.multiExpAffine(bases, scalars);
        assert.ok(g2.samePoint(g2.sumOfParts(reducedRadix), expected), `${n} points, ${width} bytes: ffjavascript`);
      }
    }
  });
});
