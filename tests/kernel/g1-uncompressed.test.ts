/**
 * The kernel's uncompressed encoding of G1 points (g1-uncompressed.c), which the audit hashes
 * into the circuit hash, against ffjavascript's (toRprUncompressed, what snarkjs hashes): points,
 * the point at infinity, and the differences a − b with every case of affine addition (a = b,
 * a = −b, either side at infinity).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Bn128Curve } from 'ffjavascript';
import { getBn128, releaseBn128 } from '../../core/crypto/bn128.ts';
import { BN254_R } from '../../core/crypto/bn254-moduli.ts';
import { G1Uncompressed } from '../../core/kernel/g1-uncompressed.ts';

let curve: Bn128Curve;
let kernel: G1Uncompressed;

function randomPoint(): Uint8Array {
  const fr = curve.Fr as unknown as { e(v: bigint): Uint8Array };
  return curve.G1.toAffine(
    curve.G1.timesFr(curve.G1.g, fr.e(BigInt(`0x${randomBytes(40).toString('hex')}`) % BN254_R)),
  );
}

/** Points in the zkey layout, (0,0) for infinity. */
function lem(points: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(points.length * 64);
  points.forEach((p, i) => {
    if (!curve.G1.isZero(p)) curve.G1.toRprLEM(out, i * 64, curve.G1.toAffine(p));
  });
  return out;
}

/** What snarkjs hashes for a point; ffjavascript writes infinity as zeros. */
function expectedUncompressed(points: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(points.length * 64);
  points.forEach((p, i) =>
    curve.G1.toRprUncompressed(
      out,
      i * 64,
      curve.G1.isZero(p) ? (curve.G1.zeroAffine as Uint8Array) : curve.G1.toAffine(p),
    ),
  );
  return out;
}

describe('G1 uncompressed encoding in the kernel', () => {
  before(async () => {
    curve = await getBn128();
    kernel = await G1Uncompressed.instantiate();
  });
  after(releaseBn128);

  it('encodes points and the point at infinity as ffjavascript does', () => {
    const points = [...Array.from({ length: 200 }, randomPoint), curve.G1.zero, curve.G1.g];
    assert.deepEqual(kernel.toUncompressed(lem(points)), expectedUncompressed(points));
  });

  it('takes differences a − b in every case of affine addition', () => {
    const G1 = curve.G1;
    const pairs: Array<[Uint8Array, Uint8Array]> = Array.from({ length: 300 }, () => [randomPoint(), randomPoint()]);
    const p = randomPoint();
    pairs.push([p, p], [p, G1.neg(p)], [G1.zero, p], [p, G1.zero], [G1.zero, G1.zero]);
    const got = kernel.differencesUncompressed(lem(pairs.map(([a]) => a)), lem(pairs.map(([, b]) => b)));
    // a + (−b): ffjavascript's sub of an affine point and its projective zero is not the point.
    assert.deepEqual(got, expectedUncompressed(pairs.map(([a, b]) => G1.add(a, G1.neg(b)))));
  });

  it('refuses buffers that do not hold whole points', () => {
    assert.throws(() => kernel.toUncompressed(new Uint8Array(65)), RangeError);
    assert.throws(() => kernel.differencesUncompressed(new Uint8Array(64), new Uint8Array(128)), RangeError);
  });
});
