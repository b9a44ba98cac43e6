/**
 * The two checks every point read from a key or a ptau goes through before it is used in a sum:
 * it is a point of the curve (or the point at infinity, which snarkjs writes as zero coordinates),
 * and each of its coordinates is canonically encoded (below q), so one point has one encoding and
 * equal points are equal bytes. Shared by the link check (verify-link-from-head.ts) and the
 * audit's check of contribution 0 (check-initial-key.ts).
 *
 * In G2 "on the curve" means on the twist E'(F_q²), not in the order-r subgroup; callers that need
 * membership say how they get it.
 */
import { BN254_Q } from '../crypto/bn254-moduli.ts';

const N8 = 32;
/** Most significant 32 bits of q: a coordinate whose top word is below this is canonical. */
const Q_TOP_WORD = Number(BN254_Q >> 224n);

export type PointGroup = 'G1' | 'G2';

/** The part of ffjavascript's curve the on-curve check runs on (its main-thread WebAssembly). */
export interface CurveMainThread {
  tm: {
    memory: WebAssembly.Memory;
    instance: { exports: Record<string, unknown> };
    startSyncOp(): void;
    endSyncOp(): void;
    alloc(length: number): number;
  };
}

function littleEndianBigint(bytes: Uint8Array, offset: number): bigint {
  return BigInt(
    `0x${Buffer.from(bytes.subarray(offset, offset + N8))
      .reverse()
      .toString('hex')}`,
  );
}

/** Each of `coordinates` 32-byte little-endian coordinates at `offset` is below q. */
export function coordinatesCanonical(bytes: Uint8Array, offset: number, coordinates: number): boolean {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let c = 0; c < coordinates; c++) {
    const start = offset + c * N8;
    const top = view.getUint32(start + N8 - 4, true);
    if (top > Q_TOP_WORD) return false;
    if (top === Q_TOP_WORD && littleEndianBigint(bytes, start) >= BN254_Q) return false;
  }
  return true;
}

/**
 * The index of the first point of `bases` (affine, snarkjs's Montgomery LEM layout) that is off the
 * curve or not canonically encoded, or -1 when all are good. Runs on ffjavascript's main-thread
 * WebAssembly in batches, so it can run while the same points' MSM runs on other threads.
 */
export function firstPointOffCurve(curve: CurveMainThread, group: PointGroup, bases: Uint8Array): number {
  const size = group === 'G1' ? 2 * N8 : 4 * N8;
  const prefix = group === 'G1' ? 'g1m' : 'g2m';
  const exports = curve.tm.instance.exports as Record<string, (p: number) => number>;
  const inCurve = exports[`${prefix}_inCurveAffine`]!;
  const isZero = exports[`${prefix}_isZeroAffine`]!;
  const count = bases.length / size;
  const batch = 256;
  curve.tm.startSyncOp();
  try {
    const pointer = curve.tm.alloc(batch * size);
    const memory = new Uint8Array(curve.tm.memory.buffer);
    if (pointer + batch * size > memory.length)
      throw new Error('ffjavascript main-thread memory is too small for the on-curve check');
    for (let first = 0; first < count; first += batch) {
      const n = Math.min(batch, count - first);
      memory.set(bases.subarray(first * size, (first + n) * size), pointer);
      for (let i = 0; i < n; i++) {
        const p = pointer + i * size;
        const onCurve = isZero(p) !== 0 || inCurve(p) !== 0;
        if (!onCurve || !coordinatesCanonical(bases, (first + i) * size, size / N8)) return first + i;
      }
    }
    return -1;
  } finally {
    curve.tm.endSyncOp();
  }
}
