/**
 * Validates one manifest entry before it is compared with anything. A missing or malformed
 * coordinate is a reason for that verifier's MISMATCH, never a crash of the whole check.
 */
import { isDecimalString, type DeltaEntry } from '../manifest/delta-manifest.ts';
import { BN254_Q } from '../crypto/bn254-moduli.ts';

/** The BN254 base field: every G2 coordinate component is smaller than this. */

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
    } else if (BigInt(value) >= BN254_Q) {
      // Not a coordinate of any key; its hex form could still occur in bytecode by accident.
      reasons.push(`${field} ${value} is not below the BN254 base field modulus`);
    }
  }
  if (reasons.length > 0) return { ok: false, reasons };
  const { deltax1, deltax2 } = entry as DeltaEntry;
  return { ok: true, delta: { deltax1, deltax2 } };
}
