/**
 * The kernel's G2 MSM (g2-msm.c, one thread, and g2MultiExp on the thread pool) against
 * ffjavascript's G2.multiExpAffine: the cases of tests/helpers/msm-cases.ts (random inputs of
 * several sizes up to past the pool's split, 16-byte scalars as the audit's check of contribution
 * 0 uses and 32-byte ones; points at infinity, zero scalars, repeated points, P with −P, one scalar
 * for many points, r−1, identity sums, a doubling with y = 0), and points of the twist outside the
 * order-r subgroup, which B2 may hold and the check's [r]·T = 0 must still see.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Bn128Curve } from 'ffjavascript';
import { getBn128, releaseBn128 } from '../../core/crypto/bn128.ts';
import { BN254_R } from '../../core/crypto/bn254-moduli.ts';
import { G1MsmKernel } from '../../core/kernel/g1-msm-kernel.ts';
import { closeG1MultiExp, g2MultiExp, g2MultiExpOrFallback } from '../../core/kernel/g1-multi-exp.ts';
import { firstPointOffCurve, type CurveMainThread } from '../../core/zkey/point-checks.ts';
import { defineMsmCases, msmTestGroup, randomScalars, type MsmTestGroup } from '../helpers/msm-cases.ts';

let curve: Bn128Curve;
let kernel: G1MsmKernel;
let g2: MsmTestGroup;

/** The parts of ffjavascript's Fq² its typings leave out (elements: c0 then c1, Montgomery, little-endian). */
interface Fq2 {
  random(): Uint8Array;
  add(a: Uint8Array, b: Uint8Array): Uint8Array;
  mul(a: Uint8Array, b: Uint8Array): Uint8Array;
  square(a: Uint8Array): Uint8Array;
  isSquare(a: Uint8Array): boolean;
  sqrt(a: Uint8Array): Uint8Array;
}

/** A random point of the twist y² = x³ + b, in the zkey layout: almost surely outside the order-r subgroup. */
function randomTwistPoint(): Uint8Array {
  const F2 = curve['F2'] as Fq2;
  const b = curve.G2['b'] as Uint8Array;
  for (;;) {
    const x = F2.random();
    const y2 = F2.add(F2.mul(F2.square(x), x), b);
    if (!F2.isSquare(y2)) continue;
    return new Uint8Array([...x, ...F2.sqrt(y2)]);
  }
}

before(async () => {
  curve = await getBn128();
  kernel = await G1MsmKernel.instantiate();
  g2 = msmTestGroup(curve, 'G2');
});
after(async () => {
  await closeG1MultiExp();
  await releaseBn128();
});

describe('G2 MSM kernel', () => {
  defineMsmCases({
    group: 'G2',
    widths: [16, 32],
    sizes: [1, 2, 3, 17, 2731, 5000],
    repeated: 4500,
    kernel: () => kernel,
    inputs: () => g2,
    multiExp: g2MultiExp,
    multiExpOrFallback: g2MultiExpOrFallback,
  });

  it('sums twist points outside the order-r subgroup like ffjavascript, so [r]·sum still exposes them', async () => {
    const n = 3000;
    const bases = g2.randomBases(n);
    for (let i = 0; i < n; i += 97) bases.set(randomTwistPoint(), i * 128);
    assert.equal(firstPointOffCurve(curve as unknown as CurveMainThread, 'G2', bases), -1, 'every point is on the twist');
    const scalars = randomScalars(n, 16);
    const expected = await g2.G.multiExpAffine(bases, scalars);
    const sum = await g2MultiExp(bases, scalars, 16);
    assert.ok(g2.samePoint(g2.sumOfParts(kernel.multiExpParts(bases, scalars, 16, 'G2')), expected), 'one thread');
    assert.ok(g2.samePoint(sum, expected), 'pool');
    assert.ok(!g2.G.isZero(g2.G.timesScalar(sum, BN254_R)), 'the sum is outside the subgroup');
  });
});
