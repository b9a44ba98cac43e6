/**
 * The random combinations of the audit's check of contribution 0 (check-initial-key.ts): Σ ρ_i·X_i
 * over a point section of the key, streamed, every point checked on the curve and fed to the
 * circuit hash as snarkjs hashes it (for B2, G2, as the sums of its MSM's windows, which the
 * subgroup test needs); and Σ c_j·P_j over a run of points of a ptau section.
 */
import type { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { CoordinatorError } from '../errors.ts';
import type { SectionLocation } from '../binfile/section-table.ts';
import type { ZkeyInfo } from '../zkey/zkey-file.ts';
import type { G1Uncompressed } from '../kernel/g1-uncompressed.ts';
import { availableParallelism } from 'node:os';
import { g1CheckedMultiExpOrFallback, g2WindowSumsOrFallback } from '../kernel/multi-exp.ts';
import { MAX_SUBGROUP_WINDOW_BITS, msmWindowBits } from '../kernel/msm-kernel.ts';
import { firstPointOffCurve } from '../zkey/point-checks.ts';
import { auditMultiExp, N8, pointSize, readAt, type AuditCurve, type GroupName } from './audit-curve.ts';
import { initialKeyMismatch, type InitialKeyPart } from './initial-key-mismatch.ts';
import { hashU32 } from './initial-key-h.ts';
import { INITIAL_KEY_SCALAR_BYTES } from './initial-key-r1cs-pass.ts';

const CHUNK_POINTS = 1 << 17;

/**
 * Σ ρ_i·X_i over one G1 point section of the key, streamed, every point checked on the curve (and
 * canonical) by the MSM threads; the uncompressed points go into the circuit hash as snarkjs hashes
 * them (length first, big-endian).
 */
export async function combineKeySection(
  curve: AuditCurve,
  kernel: G1Uncompressed,
  key: FileHandle,
  info: ZkeyInfo,
  id: number,
  part: InitialKeyPart,
  scalars: Uint8Array,
  csHash: ReturnType<typeof createHash>,
  progress: (points: number) => void,
): Promise<Uint8Array> {
  const G = curve.G1;
  const size = pointSize('G1');
  const section = info.sections.get(id)!;
  const count = section.size / size;
  hashU32(csHash, count);
  let sum = G.zero;
  for (let first = 0; first < count; first += CHUNK_POINTS) {
    const n = Math.min(CHUNK_POINTS, count - first);
    const bases = await readAt(key, section.offset + first * size, n * size, `the ${part} section of ${info.label}`);
    const chunkScalars = scalars.subarray(first * INITIAL_KEY_SCALAR_BYTES, (first + n) * INITIAL_KEY_SCALAR_BYTES);
    // The MSM threads check the points (on the curve, canonical) before summing them, while this
    // thread converts them for the hash.
    const checked = g1CheckedMultiExpOrFallback(bases, chunkScalars, INITIAL_KEY_SCALAR_BYTES);
    checked.catch(() => undefined);
    csHash.update(kernel.toUncompressed(bases));
    const result = await checked;
    if ('invalidPoint' in result)
      throw initialKeyMismatch(part, info.label, `point ${first + result.invalidPoint} is not a point of the curve`);
    sum = G.add(sum, result.sum);
    progress(n);
  }
  return sum;
}

/** B2's combination as the sums of its windows: W_w with Σ_w 2^(windowBits·w)·W_w = Σ ρ_i·B2_i. */
export interface WindowedSum {
  windows: Uint8Array[];
  windowBits: number;
}

/**
 * B2's Σ ρ_i·B2_i, streamed, every point checked on the twist, as window sums (g2WindowSums) of one
 * window width for the whole section, so that the chunks' windows add up; the uncompressed points
 * go into the circuit hash.
 */
export async function combineB2Section(
  curve: AuditCurve,
  key: FileHandle,
  info: ZkeyInfo,
  id: number,
  scalars: Uint8Array,
  csHash: ReturnType<typeof createHash>,
  progress: (points: number) => void,
): Promise<WindowedSum> {
  const G = curve.G2;
  const size = pointSize('G2');
  const section = info.sections.get(id)!;
  const count = section.size / size;
  hashU32(csHash, count);
  // The width the MSM would choose for one thread's share of a chunk, at most the subgroup argument's.
  const perThread = Math.max(1, Math.ceil(Math.min(count, CHUNK_POINTS) / availableParallelism()));
  const windowBits = Math.min(MAX_SUBGROUP_WINDOW_BITS, msmWindowBits(perThread, 8 * INITIAL_KEY_SCALAR_BYTES));
  let windows: Uint8Array[] | undefined;
  for (let first = 0; first < count; first += CHUNK_POINTS) {
    const n = Math.min(CHUNK_POINTS, count - first);
    const bases = await readAt(key, section.offset + first * size, n * size, `the B2 section of ${info.label}`);
    const chunkScalars = scalars.subarray(first * INITIAL_KEY_SCALAR_BYTES, (first + n) * INITIAL_KEY_SCALAR_BYTES);
    // The sums and the conversion run on other threads while this one checks the points on the
    // curve (about a tenth of the phase, which used to hold up the MSM); their results are used only
    // once every point passed, and a point off the curve is refused as before, once they settle.
    const work = Promise.all([
      g2WindowSumsOrFallback(bases, chunkScalars, INITIAL_KEY_SCALAR_BYTES, windowBits),
      G.batchLEMtoU(bases),
    ]);
    work.catch(() => undefined);
    await new Promise<void>((posted) => setImmediate(posted));
    const bad = firstPointOffCurve(curve, 'G2', bases);
    if (bad >= 0) {
      await work.catch(() => undefined);
      throw initialKeyMismatch('B2', info.label, `point ${first + bad} is not a point of the curve`);
    }
    const [chunkWindows, uncompressed] = await work;
    csHash.update(uncompressed);
    windows = windows ? windows.map((w, i) => G.add(w, chunkWindows[i]!)) : chunkWindows;
    progress(3 * n);
  }
  return { windows: windows ?? [], windowBits };
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
  if ((start + count) * size > section.size)
    throw new CoordinatorError('ptau.too_small', `the ptau's ${what} section is too short for this circuit`);
  let sum = G.zero;
  for (let first = 0; first < count; first += CHUNK_POINTS) {
    const n = Math.min(CHUNK_POINTS, count - first);
    const bases = await readAt(ptau, section.offset + (start + first) * size, n * size, `the ptau's ${what} section`);
    sum = G.add(sum, await auditMultiExp(curve, group, bases, scalars.subarray(first * N8, (first + n) * N8)));
    progress(n);
  }
  return sum;
}
