/**
 * H of contribution 0 (check-initial-key.ts), both ways snarkjs fixes it: section 9 is the odd
 * points of the doubled domain's Lagrange basis (ptau section 12), compared byte for byte; the
 * circuit hash instead takes H as the differences τ^{i+d} − τ^i of ptau section 2, recomputed here
 * exactly as snarkjs hashes them.
 */
import type { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { CoordinatorError } from '../errors.ts';
import type { SectionLocation } from '../binfile/section-table.ts';
import { SECTION, type ZkeyInfo } from '../zkey/zkey-file.ts';
import type { G1Uncompressed } from '../kernel/g1-uncompressed.ts';
import { G1_SIZE, N8, readAt, type AuditCurve } from './audit-curve.ts';
import { initialKeyMismatch } from './initial-key-mismatch.ts';

const CHUNK_POINTS = 1 << 17;

export function hashU32(hash: ReturnType<typeof createHash>, n: number): void {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(n, 0);
  hash.update(bytes);
}

/**
 * τ^{i+d} − τ^i for pairs, uncompressed, on ffjavascript's own main-thread wasm, for the pairs the
 * kernel cannot take: snarkjs's last chunk at domains above 2^14 reaches one point past the end of
 * ptau section 2 and hashes whatever bytes follow as if they were a point, so only ffjavascript's
 * own arithmetic on them reproduces its hash.
 */
function hPointDifferences(curve: AuditCurve, high: Uint8Array, low: Uint8Array): Uint8Array {
  const exports = curve.tm.instance.exports as Record<string, (...args: number[]) => void>;
  const count = high.length / G1_SIZE;
  const out = new Uint8Array(count * G1_SIZE);
  const batch = 512;
  const projective = 3 * N8;
  curve.tm.startSyncOp();
  try {
    const pHigh = curve.tm.alloc(batch * G1_SIZE);
    const pLow = curve.tm.alloc(batch * G1_SIZE);
    const pDiff = curve.tm.alloc(batch * projective);
    const pAffine = curve.tm.alloc(batch * G1_SIZE);
    let memory = new Uint8Array(curve.tm.memory.buffer);
    if (pAffine + batch * G1_SIZE > memory.length)
      throw new Error('ffjavascript main-thread memory is too small for the H differences');
    for (let first = 0; first < count; first += batch) {
      const n = Math.min(batch, count - first);
      memory.set(high.subarray(first * G1_SIZE, (first + n) * G1_SIZE), pHigh);
      memory.set(low.subarray(first * G1_SIZE, (first + n) * G1_SIZE), pLow);
      for (let i = 0; i < n; i++)
        exports.g1m_subAffine!(pHigh + i * G1_SIZE, pLow + i * G1_SIZE, pDiff + i * projective);
      exports.g1m_batchToAffine!(pDiff, n, pAffine);
      exports.g1m_batchLEMtoU!(pAffine, n, pAffine);
      memory = new Uint8Array(curve.tm.memory.buffer);
      out.set(memory.subarray(pAffine, pAffine + n * G1_SIZE), first * G1_SIZE);
    }
    return out;
  } finally {
    curve.tm.endSyncOp();
  }
}

/**
 * The circuit hash's share of H: τ^{i+d} − τ^i (ptau section 2), uncompressed, as snarkjs hashes
 * them; the differences are taken by the kernel (g1-uncompressed.c), one inversion per chunk,
 * except past the section's end (see hPointDifferences).
 */
export async function hashHPoints(
  curve: AuditCurve,
  uncompressed: G1Uncompressed,
  ptau: FileHandle,
  tauG1: SectionLocation,
  domainSize: number,
  csHash: ReturnType<typeof createHash>,
): Promise<void> {
  // snarkjs reads chunks of min(d − 1, 2^14) points from 0 while below d − 1: d − 1 points for
  // small domains, whole chunks (d points) above 2^14. Mirrored exactly, file positions included.
  const chunk = 1 << 14;
  const sectionPoints = tauG1.size / G1_SIZE;
  hashU32(csHash, domainSize - 1);
  for (let offset = 0; offset < domainSize - 1; offset += chunk) {
    const n = Math.min(domainSize - 1, chunk);
    const high = await readAt(
      ptau,
      tauG1.offset + (offset + domainSize) * G1_SIZE,
      n * G1_SIZE,
      "the ptau's tau section",
    );
    const low = await readAt(ptau, tauG1.offset + offset * G1_SIZE, n * G1_SIZE, "the ptau's tau section");
    const inside = Math.max(0, Math.min(n, sectionPoints - (offset + domainSize)));
    csHash.update(
      uncompressed.differencesUncompressed(high.subarray(0, inside * G1_SIZE), low.subarray(0, inside * G1_SIZE)),
    );
    if (inside < n)
      csHash.update(hPointDifferences(curve, high.subarray(inside * G1_SIZE), low.subarray(inside * G1_SIZE)));
  }
}

/** Section 9 against the odd points of the doubled domain's Lagrange basis, byte for byte. */
export async function checkHSection(
  key: FileHandle,
  info: ZkeyInfo,
  ptau: FileHandle,
  lagrangeG1: SectionLocation,
  domainSize: number,
  progress: (points: number) => void,
): Promise<void> {
  const section = info.sections.get(SECTION.h)!;
  const start = 2 * domainSize - 1;
  if ((start + 2 * domainSize) * G1_SIZE > lagrangeG1.size)
    throw new CoordinatorError('ptau.too_small', "the ptau's Lagrange section is too short for this circuit's H");
  for (let first = 0; first < domainSize; first += CHUNK_POINTS) {
    const n = Math.min(CHUNK_POINTS, domainSize - first);
    const [points, doubled] = await Promise.all([
      readAt(key, section.offset + first * G1_SIZE, n * G1_SIZE, `the H section of ${info.label}`),
      readAt(ptau, lagrangeG1.offset + (start + 2 * first) * G1_SIZE, 2 * n * G1_SIZE, "the ptau's Lagrange section"),
    ]);
    for (let i = 0; i < n; i++) {
      const expected = doubled.subarray((2 * i + 1) * G1_SIZE, (2 * i + 2) * G1_SIZE);
      if (Buffer.compare(points.subarray(i * G1_SIZE, (i + 1) * G1_SIZE), expected) !== 0) {
        throw initialKeyMismatch('H', info.label, `differs at point ${first + i}`);
      }
    }
    progress(n);
  }
}
