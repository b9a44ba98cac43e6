/**
 * Recognises a delta that is still the G2 generator. snarkjs sets gamma to the generator in every
 * Groth16 key, and delta starts there too: a final key whose delta is the generator never went
 * through Phase 2, so anyone can forge its proofs. Every verifier contract carries the gamma
 * constants, so a manifest listing the generator as delta also "matches" any verifier's bytecode.
 */
import type { DeltaEntry } from '../manifest/delta-manifest.ts';

/** x coordinate of the BN254 G2 generator in snarkjs's [c0, c1] order (vk_gamma_2[0]). */
export const BN254_G2_GENERATOR_X = [
  '10857046999023057135944570762232829481370756359578518086990519993285655852781',
  '11559732032986387107991004021392285783925812861821192530917403151452391805634',
] as const;

/** True when the entry's delta x is the generator's (deltax1 = c1, deltax2 = c0, as in the manifest). */
export function deltaIsG2Generator(delta: DeltaEntry): boolean {
  return delta.deltax1 === BN254_G2_GENERATOR_X[1] && delta.deltax2 === BN254_G2_GENERATOR_X[0];
}
