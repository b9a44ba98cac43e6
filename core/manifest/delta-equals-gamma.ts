/**
 * A verification key whose δ equals its γ never went through Phase 2 (or came back to its start):
 * every proof is then forgeable (real deployments shipped such keys: iden3/snarkjs issue 620).
 * One refusal with one code, `vkey.delta_equals_gamma`, for every place that can meet one: the
 * audit (a final key), `check-manifest` (the final keys against the manifest) and
 * `verify-deployment` (a deployed verifier), each naming the circuit and the verifier.
 */
import { CoordinatorError } from '../errors.ts';
import { deltaEqualsGamma, type VerificationKeyDelta } from './delta-manifest.ts';

export const DELTA_EQUALS_GAMMA = 'vkey.delta_equals_gamma' as const;

/** The refusal's words, for a circuit and its verifier, and what `where` had δ = γ. */
export function deltaEqualsGammaMessage(circuit: string, verifier: string, where = 'its verification key'): string {
  const why = 'the key never went through Phase 2 and anyone can forge its proofs';
  return `circuit ${circuit} (${verifier}): δ equals γ in ${where}; ${why}`;
}

/** Throws `vkey.delta_equals_gamma` when the verification key's δ equals its γ. */
export function refuseDeltaEqualsGamma(vkey: VerificationKeyDelta, circuit: string, verifier: string): void {
  if (deltaEqualsGamma(vkey))
    throw new CoordinatorError(DELTA_EQUALS_GAMMA, deltaEqualsGammaMessage(circuit, verifier));
}
