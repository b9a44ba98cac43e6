/**
 * Recognises a deployed verifier whose γ was set to its δ (a key without Phase 2 in effect, every
 * proof forgeable): none of γ's constants is pushed by the code, and each of δ's is pushed at
 * least twice, which is what solc makes of the snarkjs template with γ = δ (one push per use).
 */
import { pushedValues, runtimeBytes } from './runtime-bytecode.ts';
import { verificationKeyConstants, type VerificationKeyJson } from './verification-key-json.ts';

export function deployedGammaIsDelta(runtimeBytecodeHex: string, verificationKey: VerificationKeyJson): boolean {
  const pushed = pushedValues(runtimeBytes(runtimeBytecodeHex));
  const constants = verificationKeyConstants(verificationKey);
  const of = (point: string) => constants.filter((c) => c.label.startsWith(`${point}.`));
  return of('gamma2').every((c) => !pushed.has(c.value)) && of('delta2').every((c) => (pushed.get(c.value) ?? 0) >= 2);
}
