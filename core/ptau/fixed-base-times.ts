/**
 * Many scalar multiples of one fixed point, spread over the curve's worker threads: out[i] =
 * scalars[i]·base, in affine Montgomery form (the "LEM" encoding ptau files store).
 *
 * A development ptau needs ~3·2^(p+1) G1 and 2^(p+1) G2 points whose scalars are known but not
 * geometric (Lagrange basis values), so batchApplyKey does not apply, and a group FFT (snarkjs's
 * preparePhase2) costs n·log n full scalar multiplications. The trick here: with the 32 fixed
 * bases B_k = 2^(8k)·G, s·G = Σ_k s_k·B_k where s_k are the 32 little-endian bytes of s, so one
 * call of the wasm multi-exponentiation on (B, the scalar's own bytes as 1-byte scalars) is a
 * fixed-base multiplication with no digit decomposition. Measured here with both threads:
 * ~35 µs per G1 point and ~120 µs per G2 point, against ~106 µs and ~370 µs for one
 * `timesFrAffine` per point (what batchApplyKey does), ~3× faster. The task list is the threads'
 * own command protocol (see ffjavascript threadman_thread.js).
 */
import type { Bn128Curve, CurveGroup } from 'ffjavascript';
import { ComposePool } from '../kernel/compose-pool.ts';

/** Points per queued task: small enough to keep both threads busy to the end, large enough that
 *  posting a task costs little next to its work. */
const POINTS_PER_TASK = 4096;
const FR_BYTES = 32;
const DIGIT_BITS = 8;
const DIGITS = (FR_BYTES * 8) / DIGIT_BITS;

interface TaskManager {
  queueAction(task: unknown[]): Promise<Uint8Array[]>;
}

const windowBasesCache = new WeakMap<CurveGroup, Uint8Array>();

/** B_k = 2^(8k)·G for k = 0..31, affine, back to back. */
function windowBases(group: CurveGroup): Uint8Array {
  let bases = windowBasesCache.get(group);
  if (bases) return bases;
  const affineSize = group.F.n8 * 2;
  const double = group.double as (p: Uint8Array) => Uint8Array;
  bases = new Uint8Array(DIGITS * affineSize);
  let b = group.g;
  for (let k = 0; k < DIGITS; k++) {
    bases.set(group.toAffine(b), k * affineSize);
    for (let i = 0; i < DIGIT_BITS; i++) b = double.call(group, b);
  }
  windowBasesCache.set(group, bases);
  return bases;
}

/**
 * `scalars`: Fr elements in ffjavascript's internal (Montgomery) form, 32 bytes each. Returns the
 * points scalars[i]·G of the group's generator G: on the kernel's threads (a comb of byte windows
 * with a table of 8,160 multiples of G, at most 32 batched affine additions a point:
 * sparse-compose.h), else on ffjavascript's.
 */
export async function generatorTimesFr(
  curve: Bn128Curve,
  groupName: 'G1' | 'G2',
  scalars: Uint8Array,
): Promise<Uint8Array> {
  const pool = await kernelPool();
  if (pool) return pool.generatorTimes(groupName, scalars);
  return generatorTimesFrOnCurve(curve, groupName, scalars);
}

/** The kernel's threads for the fixed-base products, started on first use; undefined where they cannot start. */
let pool: Promise<ComposePool | undefined> | undefined;
function kernelPool(): Promise<ComposePool | undefined> {
  pool ??= ComposePool.start().catch(() => undefined);
  return pool;
}

/** Stops the kernel's threads generatorTimesFr started (the ptau's writer calls it when done). */
export async function closeGeneratorTimes(): Promise<void> {
  const started = pool;
  pool = undefined;
  await (await started)?.close();
}

/** generatorTimesFr on ffjavascript's threads (the comb of byte windows above), where the kernel cannot run. */
async function generatorTimesFrOnCurve(
  curve: Bn128Curve,
  groupName: 'G1' | 'G2',
  scalars: Uint8Array,
): Promise<Uint8Array> {
  const group = curve[groupName];
  const tm = curve.tm as TaskManager;
  const prefix = groupName === 'G1' ? 'g1m' : 'g2m';
  const affineSize = group.F.n8 * 2;
  const jacobianSize = group.F.n8 * 3;
  const bases = windowBases(group);
  if (scalars.byteLength % FR_BYTES !== 0) throw new RangeError('scalars must be whole Fr elements');
  const count = scalars.byteLength / FR_BYTES;
  const out = new Uint8Array(count * affineSize);
  const pending: Promise<void>[] = [];
  for (let start = 0; start < count; start += POINTS_PER_TASK) {
    const n = Math.min(POINTS_PER_TASK, count - start);
    const task: unknown[] = [
      { cmd: 'ALLOCSET', var: 0, buff: bases },
      { cmd: 'ALLOCSET', var: 1, buff: scalars.slice(start * FR_BYTES, (start + n) * FR_BYTES) },
      { cmd: 'ALLOC', var: 2, len: n * jacobianSize },
      // The bytes of the plain (non-Montgomery) integer are the digits.
      { cmd: 'CALL', fnName: 'frm_batchFromMontgomery', params: [{ var: 1 }, { val: n }, { var: 1 }] },
    ];
    for (let i = 0; i < n; i++) {
      task.push({
        cmd: 'CALL',
        fnName: `${prefix}_multiexpAffine`,
        params: [
          { var: 0 },
          { var: 1, offset: i * FR_BYTES },
          { val: DIGIT_BITS / 8 },
          { val: DIGITS },
          { var: 2, offset: i * jacobianSize },
        ],
      });
    }
    // In place: the conversion walks forward and each affine point is shorter than its source.
    task.push({ cmd: 'CALL', fnName: `${prefix}_batchToAffine`, params: [{ var: 2 }, { val: n }, { var: 2 }] });
    task.push({ cmd: 'GET', out: 0, var: 2, len: n * affineSize });
    pending.push(tm.queueAction(task).then((result) => out.set(result[0]!, start * affineSize)));
  }
  await Promise.all(pending);
  return out;
}
