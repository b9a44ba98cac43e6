/**
 * The addition chain the G1 kernel walks for one scalar: the scalar split by the GLV endomorphism
 * of BN254 (k = k1 + k2·λ mod r, both halves about 127 bits; λ·(x, y) = (β·x, y)), each half in
 * width-5 NAF, merged into one list of doublings and additions of odd multiples 1..15 of P or φ(P).
 * Every point of a contribution gets the same scalar, so the chain is planned once, here, and the
 * plan is checked before any point is touched: replaying it on the scalar alone (mod r) proves it
 * ends at k and never doubles the point at infinity or adds two equal or opposite points, the cases
 * the kernel's affine formulas cannot take. Both walks are checked: g1-scale.c's, step by step, and
 * g1-scale-x4.c's, which does a doubling followed by an addition, 2P + Q, as (P + Q) + P, so also
 * needs P ≠ ±Q there. A scalar whose chain fails either check is refused (`null`) and the caller
 * uses the generic path instead; for a random secret it never happens.
 */
import { BN254_Q, BN254_R } from '../crypto/bn254-moduli.ts';

export { BN254_Q, BN254_R };

/** A primitive cube root of unity in Fr: λ·P = (β·x, y) for the β below, on every point of G1. */
export const GLV_LAMBDA = 4407920970296243842393367215006156084916469457145843978461n;
/** The cube root of unity in Fq matching GLV_LAMBDA (checked against ffjavascript in the tests). */
export const GLV_BETA = 2203960485148121921418603742825762020974279258880205651966n;

const WINDOW = 5;
/** Operation codes of the kernel's schedule (see g1-scale.c). */
const OP_DOUBLE = 0;
const OP_ADD_P = 1;
const OP_ADD_PHI = 2;
const OP_SET_P = 3;
const OP_SET_PHI = 4;

export interface ScaleChain {
  /** (op, digit) byte pairs, as scale_batch reads them. */
  schedule: Int8Array;
  /** How many steps of the chain are point operations (doublings + additions). */
  steps: number;
}

const mod = (a: bigint, m: bigint): bigint => ((a % m) + m) % m;

/** round(a / b) for b > 0, halves away from zero. */
function roundDiv(a: bigint, b: bigint): bigint {
  const twice = 2n * a + (a < 0n ? -b : b);
  return twice / (2n * b);
}

function isqrt(n: bigint): bigint {
  // Newton's iteration from above: x only decreases until it reaches floor(sqrt(n)).
  let x = 1n << BigInt(Math.ceil(n.toString(2).length / 2));
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

/** Two short vectors (a, b) with a + b·λ ≡ 0 (mod r), from the extended Euclidean algorithm on (r, λ). */
function shortBasis(): [[bigint, bigint], [bigint, bigint]] {
  const root = isqrt(BN254_R);
  const rs: bigint[] = [BN254_R, GLV_LAMBDA];
  const ts: bigint[] = [0n, 1n];
  while (rs[rs.length - 1]! >= root) {
    const i = rs.length - 1;
    const quotient = rs[i - 1]! / rs[i]!;
    rs.push(rs[i - 1]! - quotient * rs[i]!);
    ts.push(ts[i - 1]! - quotient * ts[i]!);
  }
  // rs[l] is the last remainder >= sqrt(r); one more step gives the candidate for the second vector.
  const l = rs.length - 2;
  const next = rs[l]! % rs[l + 1]!;
  rs.push(next);
  ts.push(ts[l]! - (rs[l]! / rs[l + 1]!) * ts[l + 1]!);
  const v1: [bigint, bigint] = [rs[l + 1]!, -ts[l + 1]!];
  const a: [bigint, bigint] = [rs[l]!, -ts[l]!];
  const b: [bigint, bigint] = [rs[l + 2]!, -ts[l + 2]!];
  const norm = (v: [bigint, bigint]): bigint => v[0] * v[0] + v[1] * v[1];
  return [v1, norm(a) <= norm(b) ? a : b];
}

const BASIS = shortBasis();

/** k = k1 + k2·λ (mod r) with |k1|, |k2| around sqrt(r). */
export function glvSplit(k: bigint): [bigint, bigint] {
  const [[a1, b1], [a2, b2]] = BASIS;
  const det = a1 * b2 - a2 * b1;
  const sign = det < 0n ? -1n : 1n;
  const c1 = roundDiv(sign * b2 * k, sign * det);
  const c2 = roundDiv(-sign * b1 * k, sign * det);
  const k1 = k - c1 * a1 - c2 * a2;
  const k2 = -c1 * b1 - c2 * b2;
  return [k1, k2];
}

/** Width-w NAF digits of k >= 0, least significant first. */
function wnaf(k: bigint, w: number): number[] {
  const digits: number[] = [];
  const full = 1n << BigInt(w);
  const half = 1n << BigInt(w - 1);
  while (k > 0n) {
    if (k & 1n) {
      let d = k % full;
      if (d >= half) d -= full;
      digits.push(Number(d));
      k -= d;
    } else {
      digits.push(0);
    }
    k >>= 1n;
  }
  return digits;
}

/** Plans the chain for scalar k (1 <= k < r), or returns null when the kernel's formulas cannot follow it. */
export function planScaleChain(scalar: bigint): ScaleChain | null {
  const k = mod(scalar, BN254_R);
  if (k === 0n) return null;
  const [k1, k2] = glvSplit(k);
  if (mod(k1 + k2 * GLV_LAMBDA, BN254_R) !== k) throw new Error('GLV split does not recompose the scalar');
  const halves = [
    { digits: wnaf(k1 < 0n ? -k1 : k1, WINDOW), sign: k1 < 0n ? -1 : 1, base: 1n, add: OP_ADD_P, set: OP_SET_P },
    {
      digits: wnaf(k2 < 0n ? -k2 : k2, WINDOW),
      sign: k2 < 0n ? -1 : 1,
      base: GLV_LAMBDA,
      add: OP_ADD_PHI,
      set: OP_SET_PHI,
    },
  ];
  const length = Math.max(halves[0]!.digits.length, halves[1]!.digits.length);
  const schedule: number[] = [];
  let acc: bigint | null = null;
  for (let i = length - 1; i >= 0; i--) {
    // What acc was before this position's doubling: the P of the fused (P + Q) + P, if an addition follows.
    let beforeDoubling: bigint | null = null;
    if (acc !== null) {
      schedule.push(OP_DOUBLE, 0);
      beforeDoubling = acc;
      acc = mod(2n * acc, BN254_R);
    }
    for (const half of halves) {
      const digit = (half.digits[i] ?? 0) * half.sign;
      if (digit === 0) continue;
      const addend = mod(BigInt(digit) * half.base, BN254_R);
      if (acc === null) {
        schedule.push(half.set, digit);
        acc = addend;
        continue;
      }
      if (acc === addend || acc === mod(-addend, BN254_R)) return null;
      if (beforeDoubling !== null && (beforeDoubling === addend || beforeDoubling === mod(-addend, BN254_R))) {
        return null;
      }
      beforeDoubling = null; // a second addition at this position is not fused
      schedule.push(half.add, digit);
      acc = mod(acc + addend, BN254_R);
      if (acc === 0n) return null;
    }
  }
  if (acc !== k) throw new Error('the planned chain does not reach the scalar');
  return { schedule: Int8Array.from(schedule), steps: schedule.length / 2 };
}
