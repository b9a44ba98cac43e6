/**
 * The refusal of the audit's check of contribution 0 (check-initial-key.ts): which part of the key
 * is not what `snarkjs zkey new` writes for the r1cs and the ptau, named as refusals name it.
 */
import { CoordinatorError } from '../errors.ts';

/** The sections a mismatch can name. */
export type InitialKeyPart =
  'header' | 'IC' | 'coefficients' | 'A' | 'B1' | 'B2' | 'L' | 'H' | 'circuit hash' | 'contributions';

export function initialKeyMismatch(part: InitialKeyPart, label: string, why: string): CoordinatorError {
  return new CoordinatorError(
    'audit.initial_key_mismatch',
    `${label} is not the key that the r1cs and the ptau produce: ${part} ${why}`,
  );
}
