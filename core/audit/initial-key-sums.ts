/**
 * The random combinations of the audit's check of contribution 0 (check-initial-key.ts): Σ ρ_i·X_i
 * over a point section of the key, streamed, every point checked on the curve and fed to the
 * circuit hash as snarkjs hashes it; and Σ c_j·P_j over a run of points of a ptau section.
 */
import type { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { CoordinatorError } from '../errors.ts';
import type { SectionLocation } from '../binfile/section-table.ts';
import type { ZkeyInfo } from '../zkey/zkey-file.ts';
import type { G1Uncompressed } from '../kernel/g1-uncompressed.ts';
import { g1CheckedMultiExpOrFallback } from '../kernel/g1-multi-exp.ts';
import { firstPointOffCurve } from '../zkey/point-checks.ts';
import { auditMultiExp, N8, pointSize, readAt, type AuditCurve, type GroupName } from './audit-curve.ts';
import { initialKeyMismatch, type InitialKeyPart } from './initial-key-mismatch.ts';
import { hashU32 } from './initial-key-h.ts';
import { INITIAL_KEY_SCALAR_BYTES } from './initial-key-r1cs-pass.ts';

const CHUNK_POINTS = 1 << 17;

/**
 * Σ ρ_i·X_i over one point section of the key, streamed, every point checked on the curve; the
 * uncompressed points go into the circuit hash as snarkjs hashes them (length first, big-endian).
 */
export async function combineKeySection(
  curve: AuditCurve,
  kernel: G1Uncompressed,
  group: GroupName,
  key: FileHandle,
  info: ZkeyInfo,
  id: number,
  part: InitialKeyPart,
  scalars: Uint8Array,
  csHash: ReturnType<typeof createHash>,
  progress: (points: number) => void,
): Promise<Uint8Array> {
  const G = curve[group];
  const size = pointSize(group);
  const section = info.sections.get(id)!;
  const count = section.size / size;
  hashU32(csHash, count);
  let sum = G.zero;
  for (let first = 0; first < count; first += CHUNK_POINTS) {
    const n = Math.min(CHUNK_POINTS, count - first);
    const bases = await readAt(key, section.offset + first * size, n * size, `the ${part} section of ${info.label}`);
    const chunkScalars = scalars.subarray(first * INITIAL_KEY_SCALAR_BYTES, (first + n) * INITIAL_KEY_SCALAR_BYTES);
    let partial: Uint8Array;
    if (group === 'G1') {
      // The MSM threads check the points (on the curve, canonical) before summing them, while this
      // thread converts them for the hash.
      const checked = g1CheckedMultiExpOrFallback(bases, chunkScalars, INITIAL_KEY_SCALAR_BYTES);
      checked.catch(() => undefined);
      csHash.update(kernel.toUncompressed(bases));
      const result = await checked;
      if ('invalidPoint' in result) throw initialKeyMismatch(part, info.label, `point ${first + result.invalidPoint} is not a point of the curve`);
      partial = result.sum;
    } else {
      const bad = firstPointOffCurve(curve, group, bases);
      if (bad >= 0) throw initialKeyMismatch(part, info.label, `point ${first + bad} is not a point of the curve`);
      const [sum2, uncompressed] = await Promise.all([auditMultiExp(curve, group, bases, chunkScalars), G.batchLEMtoU(bases)]);
      csHash.update(uncompressed);
      partial = sum2;
    }
    sum = G.add(sum, partial);
    progress(group === 'G2' ? 3 * n : n);
  }
  return sum;
}

/** Σ c_j·P_j over `count` points of a ptau section starting at point `start`; c_j are 32-byte scalars. */
export async function combinePtauPoints(
  curve: AuditCurve,
  group: GroupName,
  ptau: FileHandle,
  section: SectionLocation,
  start: number,
  count: number,
  scalars: Uint8Array,
  what: string,
  progress: (points: number) => void,
): Promise<Uint8Array> {
  const G = curve[group];
  const size = pointSize(group);
  if ((start + count) * size > section.size) throw new CoordinatorError('ptau.too_small', `the ptau's ${what} section is too short for this circuit`);
  let sum = G.zero;
  for (let first = 0; first < count; first += CHUNK_POINTS) {
    const n = Math.min(CHUNK_POINTS, count - first);
    const bases = await readAt(ptau, section.offset + (start + first) * size, n * size, `the ptau's ${what} section`);
    sum = G.add(sum, await auditMultiExp(curve, group, bases, scalars.subarray(first * N8, (first + n) * N8)));
    progress(n);
  }
  return sum;
}
