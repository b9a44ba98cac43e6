/**
 * Whether deployed runtime bytecode carries every constant of a verification key: α1, β2, γ2, δ2
 * and every IC point, each as a value the code pushes (core/deployment/runtime-bytecode.ts), the
 * metadata trailer left out. The first constant missing, in the order the snarkjs template
 * declares them, is named (`alpha1.x`, `gamma2.x1`, `IC[3].x`; `x1` is Fq²'s c1, as in the delta
 * manifest).
 *
 * What a match proves, and what it does not: every constant of the key is in the code. It does
 * not prove that the code uses each where the verifier does (a contract written to carry the key
 * unused beside other constants would match), nor that it has no further IC points; comparing
 * the code with the recompiled verifier (core/deployment/recompile-verifiers.ts) does.
 */
import { pushedValues, runtimeBytes } from './runtime-bytecode.ts';
import { verificationKeyConstants, type VerificationKeyJson } from './verification-key-json.ts';

export type VerifierConstantsResult = { match: true } | { match: false; firstDifference: string };

export function checkVerifierConstants(
  runtimeBytecodeHex: string,
  verificationKey: VerificationKeyJson,
): VerifierConstantsResult {
  const pushed = pushedValues(runtimeBytes(runtimeBytecodeHex));
  const missing = verificationKeyConstants(verificationKey).find((constant) => !pushed.has(constant.value));
  return missing === undefined ? { match: true } : { match: false, firstDifference: missing.label };
}
