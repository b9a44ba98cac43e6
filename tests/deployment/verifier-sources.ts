/**
 * Solidity sources of Groth16 verifiers for the deployment tests, all from snarkjs's own template
 * as `ceremony finalise` renders it (core/finalise/solidity-verifier.ts), so the deployed bytecode
 * is laid out as a real verifier's. The altered ones would not verify proofs; only the constants
 * and the code they compile to matter here.
 */
import { exportSolidityVerifier, renderSolidityVerifier } from '../../core/finalise/solidity-verifier.ts';
import type { DeltaEntry } from '../../core/manifest/delta-manifest.ts';

/** The verifier of a final key, exported by snarkjs and renamed to its manifest name. */
export function verifierOfZkey(zkeyPath: string, contractName: string): Promise<string> {
  return exportSolidityVerifier(zkeyPath, contractName);
}

/**
 * A verifier rendered from a real verification key with its delta x replaced by `delta`
 * (manifest convention: deltax1 = vk_delta_2[0][1], deltax2 = vk_delta_2[0][0]).
 */
export function verifierWithDelta(vkey: Record<string, unknown>, contractName: string, delta: DeltaEntry) {
  const vkDelta2 = vkey.vk_delta_2 as string[][];
  return renderSolidityVerifier(
    { ...vkey, vk_delta_2: [[delta.deltax2, delta.deltax1], ...vkDelta2.slice(1)] },
    contractName,
  );
}

/**
 * A verifier rendered from a real verification key with its γ replaced by `gamma` (e.g. its own δ: no Phase 2 in
 * effect).
 */
export function verifierWithGamma(vkey: Record<string, unknown>, contractName: string, gamma: string[][]) {
  return renderSolidityVerifier({ ...vkey, vk_gamma_2: gamma }, contractName);
}
