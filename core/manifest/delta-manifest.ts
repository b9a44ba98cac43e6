/**
 * The delta manifest: the one artefact that ties deployed verifier contracts to the ceremony.
 * For every verifier it records the delta point of the final key's verification key, as the
 * service document defines it: `deltax1 = vk_delta_2[0][1]`, `deltax2 = vk_delta_2[0][0]`.
 */
import { CoordinatorError } from '../errors.ts';

export interface DeltaEntry {
  deltax1: string;
  deltax2: string;
}

/** Verifier name (e.g. `VerifierTransact21`) → delta point, in the ceremony's circuit order. */
export type DeltaManifest = Record<string, DeltaEntry>;

/** The part of a snarkjs Groth16 verification key that the manifest reads. */
export interface VerificationKeyDelta {
  vk_delta_2: string[][];
  vk_gamma_2?: string[][];
}

const DECIMAL = /^(0|[1-9][0-9]*)$/;

/** Extracts the manifest entry of one final key from its exported verification key. */
export function deltaEntryFromVerificationKey(vkey: VerificationKeyDelta): DeltaEntry {
  const x = vkey.vk_delta_2?.[0];
  if (!x || typeof x[0] !== 'string' || typeof x[1] !== 'string') {
    throw new CoordinatorError('input.invalid', 'verification key has no vk_delta_2[0] coordinates');
  }
  return { deltax1: x[1], deltax2: x[0] };
}

/**
 * True when delta equals gamma: the key never went through Phase 2 (or was reset), and anyone
 * can forge its proofs. Deployment checks warn loudly about it.
 */
export function deltaEqualsGamma(vkey: VerificationKeyDelta): boolean {
  const d = vkey.vk_delta_2;
  const g = vkey.vk_gamma_2;
  if (!g) return false;
  return JSON.stringify(d.slice(0, 2)) === JSON.stringify(g.slice(0, 2));
}

export function isDecimalString(value: unknown): value is string {
  return typeof value === 'string' && DECIMAL.test(value);
}

/** Serialises a manifest the way it is published: keys in ceremony order, two-space indent. */
export function serialiseManifest(manifest: DeltaManifest): string {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}
