/**
 * Points of BN254's twist E'(F_q²) outside G2, for the tests of B2's subgroup check: a random point
 * of the twist (almost surely with components of every order dividing the cofactor), and a point of
 * small order, the component a coordinator could add to a B2 point of contribution 0.
 */
import type { Bn128Curve } from 'ffjavascript';
import { BN254_Q, BN254_R } from '../../core/crypto/bn254-moduli.ts';

/** The twist's group order is r·h with this cofactor (h = 2q − r). */
const TWIST_COFACTOR = 2n * BN254_Q - BN254_R;
/** The smallest prime factor of the cofactor. */
export const SMALLEST_COFACTOR_PRIME = 10069n;

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
export function randomTwistPoint(curve: Bn128Curve): Uint8Array {
  const F2 = curve['F2'] as Fq2;
  const b = curve.G2['b'] as Uint8Array;
  for (;;) {
    const x = F2.random();
    const y2 = F2.add(F2.mul(F2.square(x), x), b);
    if (!F2.isSquare(y2)) continue;
    return new Uint8Array([...x, ...F2.sqrt(y2)]);
  }
}

/** A point of the twist of exactly this prime `order` (a factor of the cofactor), as an ffjavascript point. */
export function twistPointOfOrder(curve: Bn128Curve, order: bigint): Uint8Array {
  if (TWIST_COFACTOR % order !== 0n) throw new RangeError(`${order} does not divide the twist's cofactor`);
  const G2 = curve.G2;
  for (;;) {
    const random = G2.fromRprLEM(randomTwistPoint(curve), 0);
    const point = G2.timesScalar(G2.timesScalar(random, BN254_R), TWIST_COFACTOR / order);
    if (!G2.isZero(point)) return G2.toAffine(point);
  }
}

/** `lem` (a zkey-layout G2 point) plus `extra`, in the zkey layout. */
export function withComponent(curve: Bn128Curve, lem: Uint8Array, extra: Uint8Array): Uint8Array {
  const out = new Uint8Array(128);
  curve.G2.toRprLEM(out, 0, curve.G2.toAffine(curve.G2.add(curve.G2.fromRprLEM(lem, 0), extra)));
  return out;
}
