/**
 * The kernel's point check (point-check.c), which the MSM threads run on a key's L and H before
 * summing them, against the main-thread check it replaces (core/zkey/point-checks.ts's
 * firstPointOffCurve): the same verdict and index on good points, the point at infinity, points
 * off the curve, and coordinates encoded at or above q; and g1CheckedMultiExp's index of the first
 * bad point across the threads' slices.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Bn128Curve } from 'ffjavascript';
import { getBn128, releaseBn128 } from '../../core/crypto/bn128.ts';
import { BN254_Q, BN254_R } from '../../core/crypto/bn254-moduli.ts';
import { MsmKernel } from '../../core/kernel/msm-kernel.ts';
import {
  closeMultiExp,
  g1CheckedMultiExp,
  g1CheckedMultiExpOrFallback,
  g1MultiExp,
} from '../../core/kernel/multi-exp.ts';
import { firstPointOffCurve, type CurveMainThread } from '../../core/zkey/point-checks.ts';

let curve: Bn128Curve;
let kernel: MsmKernel;

function leBytes(value: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number((value >> BigInt(8 * i)) & 0xffn);
  return out;
}

function leValue(bytes: Uint8Array): bigint {
  let value = 0n;
  for (let i = 31; i >= 0; i--) value = (value << 8n) | BigInt(bytes[i]!);
  return value;
}

/** n distinct affine points in the zkey layout (sums of a few random multiples of the generator). */
function randomBases(n: number): Uint8Array {
  const g = curve.G1;
  const fr = curve.Fr as unknown as { e(v: bigint): Uint8Array };
  const seeds = Array.from({ length: 8 }, () =>
    g.timesFr(g.g, fr.e(BigInt(`0x${randomBytes(40).toString('hex')}`) % BN254_R)),
  );
  const out = new Uint8Array(n * 64);
  let p = seeds[0]!;
  for (let i = 0; i < n; i++) {
    p = g.add(p, seeds[i % 8]!);
    g.toRprLEM(out, i * 64, g.toAffine(p));
  }
  return out;
}

type Spoil = (bases: Uint8Array, at: number) => void;

const SPOILS: Record<string, Spoil> = {
  'y changed (off the curve)': (bases, at) =>
    void bases.set(leBytes((leValue(bases.subarray(at * 64 + 32, at * 64 + 64)) + 1n) % BN254_Q), at * 64 + 32),
  'x encoded as x + q': (bases, at) =>
    void bases.set(leBytes(leValue(bases.subarray(at * 64, at * 64 + 32)) + BN254_Q), at * 64),
  'y encoded as y + q': (bases, at) =>
    void bases.set(leBytes(leValue(bases.subarray(at * 64 + 32, at * 64 + 64)) + BN254_Q), at * 64 + 32),
  'x = q, y = 0 (infinity, miswritten)': (bases, at) => {
    bases.set(leBytes(BN254_Q), at * 64);
    bases.fill(0, at * 64 + 32, at * 64 + 64);
  },
  'x = 0, y = 1': (bases, at) => {
    bases.fill(0, at * 64, at * 64 + 64);
    bases[at * 64 + 32] = 1;
  },
  'all bytes 0xff': (bases, at) => void bases.fill(0xff, at * 64, at * 64 + 64),
};

describe('G1 point check in the kernel', () => {
  before(async () => {
    curve = await getBn128();
    kernel = await MsmKernel.instantiate();
  });
  after(async () => {
    await closeMultiExp();
    await releaseBn128();
  });

  it('passes good points and the point at infinity, as the main-thread check does', () => {
    const bases = randomBases(300);
    bases.fill(0, 17 * 64, 18 * 64);
    assert.equal(firstPointOffCurve(curve as unknown as CurveMainThread, 'G1', bases), -1);
    assert.equal(kernel.firstInvalidPoint(bases), -1);
  });

  for (const [what, spoil] of Object.entries(SPOILS)) {
    it(`finds the first bad point: ${what}`, () => {
      const bases = randomBases(300);
      spoil(bases, 211);
      spoil(bases, 250);
      assert.equal(firstPointOffCurve(curve as unknown as CurveMainThread, 'G1', bases), 211, 'the main-thread check');
      assert.equal(kernel.firstInvalidPoint(bases), 211, 'the kernel');
    });
  }

  it('the threads report the index in the whole input, whichever slice holds it, and sum only good input', async () => {
    const n = 10_000; // two slices on two threads
    const bases = randomBases(n);
    const scalars = new Uint8Array(randomBytes(n * 8));
    const checked = await g1CheckedMultiExp(bases, scalars, 8);
    assert.ok(
      'sum' in checked && curve.G1.eq(checked.sum, await g1MultiExp(bases, scalars, 8)),
      'good points are summed',
    );
    for (const at of [3, 4999, 5000, 9998]) {
      const spoilt = new Uint8Array(bases);
      SPOILS['y changed (off the curve)']!(spoilt, at);
      SPOILS['x encoded as x + q']!(spoilt, n - 1);
      assert.deepEqual(await g1CheckedMultiExp(spoilt, scalars, 8), { invalidPoint: at }, `bad point at ${at}`);
      assert.deepEqual(
        await g1CheckedMultiExpOrFallback(spoilt, scalars, 8),
        { invalidPoint: at },
        `bad point at ${at}, entry with fallback`,
      );
    }
  });
});
