/**
 * Validates one manifest entry before it is compared with anything. A missing or malformed
 * coordinate is a reason for that verifier's MISMATCH, never a crash of the whole check.
 */
import { isDecimalString, type DeltaEntry } from '../manifest/delta-manifest.ts';

/** The BN254 base field: every G2 coordinate component is smaller than this. */
const BN254_BASE_FIELD_MODULUS = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;

export type ParsedDeltaEntry = { ok: true; delta: DeltaEntry } | { ok: false; reasons: string[] };

export function parseDeltaEntry(entry: unknown): ParsedDeltaEntry {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    return { ok: false, reasons: ['manifest entry is not an object with deltax1 and deltax2'] };
  }
  const reasons: string[] = [];
  for (const field of ['deltax1', 'deltax2'] as const) {
    const value = (entry as Record<string, unknown>)[field];
    if (value === undefined) {
      reasons.push(`manifest entry has no ${field}`);
    } else if (!isDecimalString(value)) {
      reasons.push(`${field} ${JSON.stringify(value)} is not a decimal integer string`);
    } else if (BigInt(value) >= BN254_BASE_FIELD_MODULUS) {
      // Not a coordinate of any key; its hex form could still occur in bytecode by accident.
      reasons.push(`${field} ${value} is not below the BN254 base field modulus`);
    }
  }
  if (reasons.length > 0) return { ok: false, reasons };
  const { deltax1, deltax2 } = entry as DeltaEntry;
  return { ok: true, delta: { deltax1, deltax2 } };
}
