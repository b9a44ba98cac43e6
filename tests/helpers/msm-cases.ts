/**
 * What the tests of the kernel's multi-exponentiations (tests/kernel/g1-msm, g2-msm) share: inputs
 * in either group (random points of the zkey layout, scalars, negation, the sum of a kernel call's
 * partial sums, a comparison that knows ffjavascript's identities) and the cases both groups pass.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Bn128Curve, CurveGroup } from 'ffjavascript';
import { BN254_R } from '../../core/crypto/bn254-moduli.ts';
import { getBn128, releaseBn128 } from '../../core/crypto/bn128.ts';
import { MSM_POINT_BYTES, MsmKernel, type MsmGroup } from '../../core/kernel/msm-kernel.ts';
import { closeMultiExp } from '../../core/kernel/multi-exp.ts';

function randomFr(): bigint {
  return BigInt(`0x${randomBytes(40).toString('hex')}`) % BN254_R;
}

/** `value` as `width` little-endian bytes. */
export function scalarBytesOf(value: bigint, width: number): Uint8Array {
  const out = new Uint8Array(width);
  for (let i = 0; i < width; i++) out[i] = Number((value >> BigInt(8 * i)) & 0xffn);
  return out;
}

/** n scalars of `width` bytes: uniform below 2^(8·width), or below r at 32 bytes. */
export function randomScalars(n: number, width: number): Uint8Array {
  if (width < 32) return new Uint8Array(randomBytes(n * width));
  const out = new Uint8Array(n * 32);
  for (let i = 0; i < n; i++) out.set(scalarBytesOf(randomFr(), 32), i * 32);
  return out;
}

interface MsmTestGroup {
  group: MsmGroup;
  G: CurveGroup;
  pointBytes: number;
  /**
   * n affine points in the zkey layout: a few random ones, then sums of them (all distinct in practice),
   * a window at a random offset of one pool of them.
   */
  randomBases(n: number): Uint8Array;
  /** Point i of a buffer of points (a view). */
  pointAt(bases: Uint8Array, i: number): Uint8Array;
  /** −P of a zkey-layout point, in the same layout. */
  negated(lem: Uint8Array): Uint8Array;
  /** The sum of a kernel call's partial sums (all zero is infinity, which ffjavascript's add does not take as one). */
  sumOfParts(parts: Uint8Array): Uint8Array;
  /** Equal points; ffjavascript has more than one encoding of the identity, which eq does not always match. */
  samePoint(a: Uint8Array, b: Uint8Array): boolean;
}

function msmTestGroup(curve: Bn128Curve, group: MsmGroup): MsmTestGroup {
  const G = curve[group];
  const pointBytes = MSM_POINT_BYTES[group];
  const Fr = curve.Fr as unknown as { e(v: bigint): Uint8Array };
  const seeds = Array.from({ length: 16 }, () => G.timesFr(G.g, Fr.e(randomFr())));
  let last = seeds[0]!;
  let pool = new Uint8Array(0);
  return {
    group,
    G,
    pointBytes,
    randomBases(n) {
      // Each point costs an inversion (toAffine) through ffjavascript's per-call copies: drawn once
      // into a pool that grows to the largest request, and each call copies a window of it at a
      // random offset, instead of drawing every call's points anew.
      if (n * pointBytes > pool.byteLength) {
        const grown = new Uint8Array(n * pointBytes);
        grown.set(pool);
        for (let i = pool.byteLength / pointBytes; i < n; i++) {
          last = G.add(last, seeds[i % 16]!);
          G.toRprLEM(grown, i * pointBytes, G.toAffine(last));
        }
        pool = grown;
      }
      const start = Math.floor(Math.random() * (pool.byteLength / pointBytes - n + 1));
      return pool.slice(start * pointBytes, (start + n) * pointBytes);
    },
    pointAt: (bases, i) => bases.subarray(i * pointBytes, (i + 1) * pointBytes),
    negated(lem) {
      const out = new Uint8Array(pointBytes);
      G.toRprLEM(out, 0, G.toAffine(G.neg(G.fromRprLEM(lem, 0))));
      return out;
    },
    sumOfParts(parts) {
      let sum = G.zero;
      for (let offset = 0; offset < parts.byteLength; offset += pointBytes) {
        if (parts.subarray(offset, offset + pointBytes).some((byte) => byte !== 0))
          sum = G.add(sum, G.fromRprLEM(parts, offset));
      }
      return sum;
    },
    samePoint: (a, b) => (G.isZero(a) || G.isZero(b) ? G.isZero(a) && G.isZero(b) : G.eq(a, b)),
  };
}

/** A kernel MSM test file's inputs in its group, with the curve and the one-thread kernel. */
export interface MsmSuite extends MsmTestGroup {
  curve: Bn128Curve;
  kernel: MsmKernel;
}

/**
 * Registers, at the top of a kernel MSM test file, a `before` that fills in the suite it returns
 * (the curve, the one-thread kernel, inputs in `group`) and an `after` that closes the thread pool
 * and releases the curve.
 */
export function msmSuite(group: MsmGroup): MsmSuite {
  const suite = {} as MsmSuite;
  before(async () => {
    const curve = await getBn128();
    const kernel = await MsmKernel.instantiate();
    Object.assign(suite, msmTestGroup(curve, group), { curve, kernel });
  });
  after(async () => {
    await closeMultiExp();
    await releaseBn128();
  });
  return suite;
}

export interface MsmCaseOptions {
  /** The file's msmSuite: the group, the one-thread kernel and the inputs, once its `before` has run. */
  suite: MsmSuite;
  /** Scalar widths to try: the group's working width(s) and 32 (field elements, r − 1). */
  widths: number[];
  /** Sizes of the random inputs: 1, 2, odd small counts, a few thousand, past the pool's split into threads. */
  sizes: number[];
  /** Points of the repeated-point inputs (past the pool's split too). */
  repeated: number;
  /** The pool's entry points for the group (g1MultiExp, g1MultiExpOrFallback or the G2 ones). */
  multiExp(bases: Uint8Array, scalars: Uint8Array, scalarBytes: number): Promise<Uint8Array>;
  multiExpOrFallback(bases: Uint8Array, scalars: Uint8Array, scalarBytes: number): Promise<Uint8Array>;
}

/**
 * The cases every group's MSM must pass, against ffjavascript's multiExpAffine, on one thread and
 * on the pool; registered inside the caller's describe: random inputs, and the inputs affine
 * addition cannot take blindly: points at infinity, zero scalars, one point repeated (doublings
 * inside a bucket), P with −P under the same scalar (pairs that vanish), many points under one
 * scalar (one bucket per window), r − 1, sums that are the identity; and arguments that do not match.
 */
export function defineMsmCases(options: MsmCaseOptions): void {
  const { suite, multiExp, multiExpOrFallback } = options;
  const kernelSum = (bases: Uint8Array, scalars: Uint8Array, width: number): Uint8Array =>
    suite.sumOfParts(suite.kernel.multiExpParts(bases, scalars, width, suite.group));
  const assertBothMatch = async (
    bases: Uint8Array,
    scalars: Uint8Array,
    width: number,
    what: string,
  ): Promise<void> => {
    const { G, samePoint } = suite;
    const expected = await G.multiExpAffine(bases, scalars);
    assert.ok(samePoint(kernelSum(bases, scalars, width), expected), `one thread: ${what}`);
    assert.ok(samePoint(await multiExp(bases, scalars, width), expected), `pool: ${what}`);
  };

  for (const width of options.widths) {
    it(`sums like ffjavascript on random inputs, ${width}-byte scalars`, async () => {
      for (const n of options.sizes)
        await assertBothMatch(suite.randomBases(n), randomScalars(n, width), width, `${n} points`);
    });
  }

  it('takes points at infinity, zero scalars and r − 1', async () => {
    const { G, pointBytes, randomBases } = suite;
    const n = 600;
    const bases = randomBases(n);
    const scalars = randomScalars(n, 32);
    for (let i = 0; i < n; i += 7) bases.fill(0, i * pointBytes, (i + 1) * pointBytes);
    for (let i = 3; i < n; i += 5) scalars.fill(0, i * 32, (i + 1) * 32);
    for (let i = 1; i < n; i += 11) scalars.set(scalarBytesOf(BN254_R - 1n, 32), i * 32);
    await assertBothMatch(bases, scalars, 32, 'mixed');
    await assertBothMatch(bases, new Uint8Array(n * 32), 32, 'all scalars zero');
    // ffjavascript itself answers (0, 0, 1), not a point, when every base is at infinity.
    assert.ok(G.isZero(kernelSum(new Uint8Array(n * pointBytes), scalars, 32)), 'one thread: all points at infinity');
    assert.ok(G.isZero(await multiExp(new Uint8Array(n * pointBytes), scalars, 32)), 'pool: all points at infinity');
    const width = options.widths[0]!;
    await assertBothMatch(new Uint8Array(0), new Uint8Array(0), width, 'no points');
    assert.ok(G.isZero(await multiExp(bases, new Uint8Array(n * width), width)), 'zero scalars sum to the identity');
  });

  it(
    'takes one point repeated (doublings in a bucket), P with −P (pairs ' +
      'that vanish) and one scalar for many points',
    async () => {
      const { G, pointBytes, randomBases, pointAt, negated } = suite;
      const distinct = randomBases(5);
      const n = options.repeated;
      for (const width of options.widths) {
        const bases = new Uint8Array(n * pointBytes);
        const scalars = new Uint8Array(n * width);
        const same = randomScalars(1, width);
        for (let i = 0; i < n; i++) {
          const p = pointAt(distinct, i % 5);
          // A third: pairs (P, −P) under one scalar; a third: P repeated under that scalar (so two
          // thirds share each window's bucket); a third: P repeated under random scalars.
          if (3 * i < n) bases.set(i % 2 === 0 ? p : negated(p), i * pointBytes);
          else bases.set(pointAt(distinct, 0), i * pointBytes);
          scalars.set(3 * i < 2 * n ? same : randomScalars(1, width), i * width);
        }
        await assertBothMatch(bases, scalars, width, `${width}-byte scalars`);
      }
      // A sum that is exactly the identity: P·s + (−P)·s.
      const p = pointAt(distinct, 1);
      const bases = new Uint8Array(2 * pointBytes);
      bases.set(p, 0);
      bases.set(negated(p), pointBytes);
      const s = randomScalars(1, 32);
      const scalars = new Uint8Array(64);
      scalars.set(s, 0);
      scalars.set(s, 32);
      assert.ok(G.isZero(kernelSum(bases, scalars, 32)));
      assert.ok(G.isZero(await multiExp(bases, scalars, 32)));
    },
  );

  it("doubles a point with y = 0 into the identity, without spoiling the round's shared inversion", async () => {
    // Off the curve (neither G1 nor the twist has a point of order 2), as an unchecked input can be.
    // Its two copies lead their bucket in every window, so they are paired together first.
    const { G, pointBytes, randomBases, samePoint } = suite;
    const rest = randomBases(3000);
    const restScalars = randomScalars(3000, 32);
    const orderTwo = new Uint8Array(pointBytes);
    orderTwo.set(rest.subarray(0, pointBytes / 2), 0);
    const bases = new Uint8Array([...orderTwo, ...orderTwo, ...rest]);
    const s = randomScalars(1, 32);
    const scalars = new Uint8Array([...s, ...s, ...restScalars]);
    const expected = await G.multiExpAffine(rest, restScalars);
    assert.ok(samePoint(kernelSum(bases, scalars, 32), expected), 'one thread');
    assert.ok(samePoint(await multiExp(bases, scalars, 32), expected), 'pool');
  });

  it('refuses buffers that do not match', async () => {
    const { pointBytes } = suite;
    await assert.rejects(multiExp(new Uint8Array(pointBytes - 1), new Uint8Array(8), 8), RangeError);
    await assert.rejects(multiExp(new Uint8Array(pointBytes), new Uint8Array(7), 8), RangeError);
    await assert.rejects(multiExp(new Uint8Array(pointBytes), new Uint8Array(33), 33), RangeError);
    // The fallback is for a kernel that cannot run, not for a caller's mistake.
    await assert.rejects(multiExpOrFallback(new Uint8Array(pointBytes), new Uint8Array(7), 8), RangeError);
  });

  it("the fallback entry point computes the kernel's sum", async () => {
    const { G, randomBases, samePoint } = suite;
    const n = options.sizes.at(-1)!;
    const bases = randomBases(n);
    const scalars = randomScalars(n, 32);
    assert.ok(samePoint(await multiExpOrFallback(bases, scalars, 32), await G.multiExpAffine(bases, scalars)));
  });
}
