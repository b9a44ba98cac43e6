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
 *
 * The SIMD walk gets a chain of its own where one is cheaper for it (most scalars): one half
 * recoded around the other so that fewer of its additions fall on a position where the other adds
 * too (an addition alone there, 6 products, where one after a doubling is 4 beyond it) and the
 * chain is no longer than it must be, about 21 products a point fewer (simdDigits). The same
 * scalar, checked the same way, so the same bytes out. The scalar walk keeps width-5 NAF's chain:
 * where its additions fall costs it nothing.
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
/**
 * Not an operation: in a ScaleChain's schedule, after the `steps` pairs every walk can take, this
 * pair (its digit the difference in steps) and the SIMD walk's own chain (`walkSchedule`).
 */
const OP_SIMD_CHAIN = 5;

export interface ScaleChain {
  /**
   * (op, digit) byte pairs, as scale_batch reads them: the chain, then (OP_SIMD_CHAIN, its
   * difference in steps) and the same scalar's chain recoded for the SIMD walk, where it is cheaper
   * there (`walkSchedule` picks a walk's).
   */
  schedule: Int8Array;
  /** How many pairs of the schedule the first chain is (doublings, additions and the first setting). */
  steps: number;
}

/** The schedule and its count of pairs that a walk runs: the SIMD walk's own chain where there is one. */
export function walkSchedule(chain: ScaleChain, simd: boolean): { schedule: Int8Array; steps: number } {
  const end = 2 * chain.steps;
  if (simd && chain.schedule[end] === OP_SIMD_CHAIN) {
    const steps = chain.steps + chain.schedule[end + 1]!;
    return { schedule: chain.schedule.subarray(end + 2, end + 2 + 2 * steps), steps };
  }
  return { schedule: chain.schedule.subarray(0, end), steps: chain.steps };
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

/** The SIMD walk's products for a digit beyond its position's doubling: fused with it, or alone. */
const SIMD_FUSED_ADDITION = 4;
const SIMD_ADDITION_ALONE = 6;
const SIMD_DOUBLING = 7;

/**
 * Digits of k >= 0 (least significant first; odd, within ±15, where not 0: the table's) chosen for
 * the SIMD walk beside `other`, the other half's: a digit where `other` has none is fused with its
 * position's doubling (4 products beyond it), one where `other` has one is an addition alone (6),
 * and a position past `other`'s end that k still needs is a doubling more (7). Dynamic programming
 * over (position j, carry c), where what is left to write is floor(k / 2^j) + c; |c| <= 16 holds.
 * Ties keep width-5 NAF's digit, so the chain differs only where it saves products. Null if no
 * recoding ends within the carries kept (not met).
 */
function simdDigits(k: bigint, other: readonly number[]): number[] | null {
  const bits = Array.from(k.toString(2)).reverse().map(Number);
  const n = bits.length;
  const CARRY = 16;
  const width = 2 * CARRY + 1;
  const end = n + 8;
  // What is left as a number, where it is small enough to be exact (near and past the top).
  const left = (j: number, c: number): number => (j >= n ? c : j >= n - 40 ? Number(k >> BigInt(j)) + c : Infinity);
  const cost = new Float64Array((end + 1) * width).fill(Infinity);
  const choice = new Int8Array((end + 1) * width);
  const at = (j: number, c: number): number => j * width + c + CARRY;
  cost[at(end, 0)] = 0;
  for (let j = end - 1; j >= 0; j--) {
    for (let c = -CARRY; c <= CARRY; c++) {
      if (left(j, c) === 0) {
        cost[at(j, c)] = 0;
        continue;
      }
      if (left(j, c) < 0) continue; // k's halves are walked as positive numbers
      const b = bits[j] ?? 0;
      const doubling = j >= other.length ? SIMD_DOUBLING : 0;
      if ((b + c) % 2 === 0) {
        cost[at(j, c)] = doubling + cost[at(j + 1, (b + c) / 2)]!;
        continue;
      }
      const addition = other[j] ? SIMD_ADDITION_ALONE : SIMD_FUSED_ADDITION;
      // Width-5 NAF's digit first, so that it wins the ties.
      let low = 0;
      for (let i = 4; i >= 0; i--) low = 2 * low + (bits[j + i] ?? 0);
      let naf = (((low + c) % 32) + 32) % 32;
      if (naf >= 16) naf -= 32;
      let best = Infinity;
      let bestDigit = 0;
      for (const d of [naf, -15, -13, -11, -9, -7, -5, -3, -1, 1, 3, 5, 7, 9, 11, 13, 15]) {
        const next = (b + c - d) / 2;
        if (next < -CARRY || next > CARRY) continue;
        const total = doubling + addition + cost[at(j + 1, next)]!;
        if (total < best) {
          best = total;
          bestDigit = d;
        }
      }
      cost[at(j, c)] = best;
      choice[at(j, c)] = bestDigit;
    }
  }
  const digits: number[] = [];
  let c = 0;
  for (let j = 0; left(j, c) !== 0; j++) {
    if (j >= end || cost[at(j, c)] === Infinity) return null;
    const b = bits[j] ?? 0;
    const d = (b + c) % 2 === 0 ? 0 : choice[at(j, c)]!;
    digits.push(d);
    c = (b + c - d) / 2;
  }
  return digits;
}

/**
 * The last scalar planned and its chain (planScaleChain). A contribution's scalar is its secret's
 * inverse: forgetLastScaleChain drops it once the scaling is done, so the module does not hold it
 * for the rest of a process that goes on (a page's worker before it is ended, a coordinator).
 */
let lastPlan: { k: bigint; chain: ScaleChain | null } | undefined;

/** Drops the last plan kept (installFastApplyKey's restore calls it). */
export function forgetLastScaleChain(): void {
  lastPlan = undefined;
}

/** Plans the chain for scalar k (1 <= k < r), or returns null when the kernel's formulas cannot follow it. */
export function planScaleChain(scalar: bigint): ScaleChain | null {
  const k = mod(scalar, BN254_R);
  if (k === 0n) return null;
  // snarkjs applies one scalar in calls of 2^16 points, and planning takes some 20 ms (the SIMD
  // walk's recodings): the last plan is kept (its schedule is only ever read or copied).
  if (lastPlan?.k === k) return lastPlan.chain;
  const chain = planChain(k);
  lastPlan = { k, chain };
  return chain;
}

function planChain(k: bigint): ScaleChain | null {
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
  const standard = chainSchedule(k, halves);
  if (!standard) return null;
  const schedule = [...standard];
  // The SIMD walk's own chain: the cheapest for it of φ(P)'s half recoded around P's, P's then
  // recoded around that, and P's recoded around φ(P)'s NAF, among those whose checks pass.
  const [p, phi] = halves as [ChainHalf, ChainHalf];
  const abs = [k1 < 0n ? -k1 : k1, k2 < 0n ? -k2 : k2] as const;
  const recoded = (half: ChainHalf, digits: number[] | null): ChainHalf | null => digits && { ...half, digits };
  const phiAround = recoded(phi, simdDigits(abs[1], p.digits));
  const pAroundThat = phiAround && recoded(p, simdDigits(abs[0], phiAround.digits));
  const pAround = recoded(p, simdDigits(abs[0], phi.digits));
  let best = standard;
  for (const pair of [
    [p, phiAround],
    [pAroundThat, phiAround],
    [pAround, phi],
  ]) {
    if (!pair[0] || !pair[1]) continue;
    const candidate = chainSchedule(k, [pair[0], pair[1]]);
    if (candidate && simdCost(candidate) < simdCost(best)) best = candidate;
  }
  const shift = (best.length - standard.length) / 2;
  if (best !== standard && Math.abs(shift) < 128) schedule.push(OP_SIMD_CHAIN, shift, ...best);
  return { schedule: Int8Array.from(schedule), steps: standard.length / 2 };
}

/** A schedule's products in the SIMD walk: 7 a doubling, 11 a doubling followed by an addition, 6 an addition alone. */
function simdCost(schedule: readonly number[]): number {
  let cost = 0;
  for (let i = 0; i < schedule.length; i += 2) {
    const op = schedule[i];
    const next = schedule[i + 2];
    const fused = op === OP_DOUBLE && (next === OP_ADD_P || next === OP_ADD_PHI);
    // The fused addition is counted with its doubling, 4 beyond it, and as an addition, 6.
    if (op === OP_DOUBLE) cost += SIMD_DOUBLING + (fused ? SIMD_FUSED_ADDITION - SIMD_ADDITION_ALONE : 0);
    else if (op === OP_ADD_P || op === OP_ADD_PHI) cost += SIMD_ADDITION_ALONE;
  }
  return cost;
}

interface ChainHalf {
  digits: number[];
  sign: number;
  base: bigint;
  add: number;
  set: number;
}

/** The (op, digit) pairs walking the two halves' digits, or null where a walk's formulas cannot follow them. */
function chainSchedule(k: bigint, halves: ChainHalf[]): number[] | null {
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
  return schedule;
}
