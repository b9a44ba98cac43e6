/**
 * The receipt check's pairings, on ffjavascript's BN254 (the curve snarkjs uses, WebAssembly, one
 * thread, no workers: a few megabytes in the page, which loads this module only when it checks a
 * receipt). For the records of a key's history after the receipt's own:
 *
 *  - each record's proof of knowledge: with g2_sp = hashToG2(its transcript digest), as snarkjs
 *    draws it, e(g1_s, g2_spx) = e(g1_sx, g2_sp): whoever wrote the record knew the x with
 *    g1_sx = x·g1_s and g2_spx = x·g2_sp;
 *  - its δ step: e(δ_before, g2_spx) = e(δ_after, g2_sp), δ_before the record before it's δ, so
 *    δ_after = x·δ_before for that same x. From the receipt's record to the last, the key's δ is
 *    the receipt's δ times secrets its later writers proved they knew: it carries the receipt's
 *    contributor's secret, which nobody else knows.
 *  - and for the key, e(δ1, g2) = e(g1, δ2): its δ in G2 is its δ in G1.
 *
 * All the records' equations are checked as one product of pairings, each equation raised to its
 * own fresh random 128-bit scalar (crypto.getRandomValues): if any equation fails, the product is 1
 * for at most one value of its scalar, ≤ 2^-128. On a failure each record is checked alone, to
 * name it. Every point must be on the curve, not the point at infinity, and δ2 and each g2_spx in
 * G2's order-r subgroup (g2_sp is cofactor-cleared by hashToG2).
 */
import { buildBn128, type Bn128Curve, type CurveGroup } from 'ffjavascript';
import { BN254_R } from '../crypto/bn254-moduli.ts';
import { hashToG2 } from '../crypto/snarkjs-hash-to-g2.ts';
import { CoordinatorError } from '../errors.ts';
import { g2Uncompressed, NonCanonicalCoordinateError } from './uncompressed-points.ts';
import type { HistoryRecord } from './zkey-history.ts';

type Group = CurveGroup & { isValid(point: Uint8Array): boolean };

let curve: Promise<Bn128Curve> | undefined;
/** One single-threaded curve per process or page: a few pairings need no worker threads. */
const bn128 = (): Promise<Bn128Curve> => (curve ??= buildBn128(true));

function randomScalar(): bigint {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return bytes.reduce((value, byte) => (value << 8n) | BigInt(byte), 0n);
}

interface RecordEquations {
  /** 1-based record number, for messages. */
  number: number;
  g1s: Uint8Array;
  g1sx: Uint8Array;
  deltaBefore: Uint8Array;
  deltaAfter: Uint8Array;
  g2sp: Uint8Array;
  g2spx: Uint8Array;
}

function proofInvalid(label: string, number: number, why: string): CoordinatorError {
  return new CoordinatorError('receipt.proof_invalid', `${label}: record ${number} ${why}`);
}

function recordPoints(c: Bn128Curve, label: string, records: HistoryRecord[], index: number): RecordEquations {
  const G1 = c.G1 as Group;
  const G2 = c.G2 as Group;
  const record = records[index]!;
  const number = index + 1;
  const g1 = (bytes: Uint8Array, name: string): Uint8Array => {
    const point = G1.fromRprLEM(bytes, 0);
    if (!G1.isValid(point) || G1.isZero(point))
      throw proofInvalid(label, number, `has a ${name} that is not a point of the curve other than infinity`);
    return point;
  };
  const g2spx = G2.fromRprLEM(record.g2Spx, 0);
  if (!G2.isValid(g2spx) || G2.isZero(g2spx) || !G2.isZero(G2.timesScalar(g2spx, BN254_R)))
    throw proofInvalid(label, number, "has a g2_spx outside G2's order-r subgroup (or at infinity)");
  return {
    number,
    g1s: g1(record.g1S, 'g1_s'),
    g1sx: g1(record.g1Sx, 'g1_sx'),
    deltaBefore: g1(records[index - 1]!.deltaAfter, 'δ (the record before it)'),
    deltaAfter: g1(record.deltaAfter, 'δ'),
    g2sp: hashToG2(c, record.transcript),
    g2spx,
  };
}

/** e(a·g1_s + b·δ_before, g2_spx) · e(−(a·g1_sx + b·δ_after), g2_sp): 1 when both equations hold. */
function combinedPairs(c: Bn128Curve, eq: RecordEquations, a: bigint, b: bigint): Uint8Array[] {
  const { G1 } = c;
  const left = G1.add(G1.timesScalar(eq.g1s, a), G1.timesScalar(eq.deltaBefore, b));
  const right = G1.add(G1.timesScalar(eq.g1sx, a), G1.timesScalar(eq.deltaAfter, b));
  return [left, eq.g2spx, G1.neg(right), eq.g2sp];
}

/**
 * Checks the proof of knowledge and the δ step of every record after record `from` (1-based: the
 * receipt's own), to the last. Throws `receipt.proof_invalid` naming the first record that fails.
 * Returns how many records were checked.
 */
export async function checkRecordsAfter(records: HistoryRecord[], from: number, label: string): Promise<number> {
  if (from < 1 || from >= records.length) return 0;
  const c = await bn128();
  const equations = records.slice(from).map((_, i) => recordPoints(c, label, records, from + i));
  const pairs = equations.flatMap((eq) => combinedPairs(c, eq, randomScalar(), randomScalar()));
  if (await c.pairingEq(...pairs)) return equations.length;
  for (const eq of equations) {
    const { G1 } = c;
    if (!(await c.pairingEq(eq.g1s, eq.g2spx, G1.neg(eq.g1sx), eq.g2sp)))
      throw proofInvalid(
        label,
        eq.number,
        'does not prove knowledge of its secret (e(g1_s, g2_spx) ≠ e(g1_sx, g2_sp))',
      );
    if (!(await c.pairingEq(eq.deltaBefore, eq.g2spx, G1.neg(eq.deltaAfter), eq.g2sp)))
      throw proofInvalid(
        label,
        eq.number,
        'has a δ that is not the δ before it raised to its proven secret (e(δ_before, g2_spx) ≠ e(δ_after, g2_sp))',
      );
  }
  // Every equation held alone, yet not their product: only an arithmetic fault could do that.
  throw proofInvalid(label, equations[0]!.number, 'and the records after it do not verify together');
}

/** e(δ1, g2) = e(g1, δ2) for the header's δ1 and δ2 (as stored). Throws `receipt.delta_mismatch`. */
export async function checkDeltaPair(delta1: Uint8Array, delta2: Uint8Array, label: string): Promise<void> {
  const c = await bn128();
  const G1 = c.G1 as Group;
  const G2 = c.G2 as Group;
  const mismatch = (why: string): CoordinatorError =>
    new CoordinatorError('receipt.delta_mismatch', `${label}: its δ in G2 ${why}`);
  try {
    g2Uncompressed(delta2);
  } catch (error) {
    if (error instanceof NonCanonicalCoordinateError) throw mismatch('is not canonically encoded');
    throw error;
  }
  const d1 = G1.fromRprLEM(delta1, 0);
  const d2 = G2.fromRprLEM(delta2, 0);
  if (!G2.isValid(d2) || G2.isZero(d2) || !G2.isZero(G2.timesScalar(d2, BN254_R)))
    throw mismatch("is not a point of G2's order-r subgroup");
  if (!G1.isValid(d1) || G1.isZero(d1) || !(await c.pairingEq(G1.neg(d1), G2.g, G1.g, d2)))
    throw mismatch('is not its δ in G1: e(δ1, g2) ≠ e(g1, δ2)');
}
