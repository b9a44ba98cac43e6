/**
 * What the audit's checks of contribution 0 and of the ptau share about the curve: ffjavascript's
 * bn128 with the parts its typings leave out, the point sizes of the zkey/ptau layout, exact
 * positioned reads of a file, and the one place their multi-exponentiations run (the kernel's
 * MSMs, core/kernel/multi-exp.ts: G1 2-2.5× ffjavascript's here, G2 2.2-2.4× on B2 at rs18,
 * bench/g2-msm.ts; ffjavascript's own where the kernel cannot run).
 */
import type { FileHandle } from 'node:fs/promises';
import type { Bn128Curve, CurveGroup } from 'ffjavascript';
import { CoordinatorError } from '../errors.ts';
import { readExactlyInto, ShortReadError } from '../binfile/read-exactly.ts';
import { g1MultiExpOrFallback, g2MultiExpOrFallback } from '../kernel/multi-exp.ts';
import type { CurveMainThread } from '../zkey/point-checks.ts';

export const N8 = 32;
export const G1_SIZE = 2 * N8;
export const G2_SIZE = 4 * N8;

/** The parts of ffjavascript's curve that its typings leave out. */
interface CurveExtras {
  G1: CurveGroup & { batchLEMtoU(b: Uint8Array): Promise<Uint8Array> };
  G2: CurveGroup & { batchLEMtoU(b: Uint8Array): Promise<Uint8Array> };
  tm: CurveMainThread['tm'];
}
export type AuditCurve = Bn128Curve & CurveExtras;
export type GroupName = 'G1' | 'G2';

export const pointSize = (group: GroupName): number => (group === 'G1' ? G1_SIZE : G2_SIZE);

/** `length` bytes of the file from `position`; a file that ends first is `chain.file_unreadable`. */
export async function readAt(handle: FileHandle, position: number, length: number, what: string): Promise<Uint8Array> {
  // A plain Uint8Array with its own buffer: ffjavascript posts slices of it to its workers.
  const bytes = new Uint8Array(length);
  try {
    await readExactlyInto(handle, bytes, position);
  } catch (error) {
    if (error instanceof ShortReadError)
      throw new CoordinatorError('chain.file_unreadable', `${what} could not be read completely`);
    throw error;
  }
  return bytes;
}

/**
 * Σ scalars_i·bases_i in `group`: scalars little-endian, scalars.length / points bytes each, as a
 * point of ffjavascript's curve.
 */
export function auditMultiExp(
  curve: AuditCurve,
  group: GroupName,
  bases: Uint8Array,
  scalars: Uint8Array,
): Promise<Uint8Array> {
  if (bases.length === 0) return Promise.resolve(curve[group].zero);
  const scalarBytes = scalars.length / (bases.length / pointSize(group));
  return group === 'G1'
    ? g1MultiExpOrFallback(bases, scalars, scalarBytes)
    : g2MultiExpOrFallback(bases, scalars, scalarBytes);
}

/**
 * Π e(P_i, Q_i) = 1, leaving out pairs with an identity point: ffjavascript's pairing does not
 * treat the point at infinity as neutral (a circuit whose public signals never appear in B has
 * zero sums here).
 */
export function pairingHolds(curve: AuditCurve, pairs: Array<[Uint8Array, Uint8Array]>): Promise<boolean> {
  const kept = pairs.filter(([p, q]) => !curve.G1.isZero(p) && !curve.G2.isZero(q));
  if (kept.length === 0) return Promise.resolve(true);
  return curve.pairingEq(...kept.flat());
}
