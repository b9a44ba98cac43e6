/**
 * Maps a verifier contract name to its circuit, the inverse of the naming in the service
 * document: `VerifierTransact21` → `transact21`, `VerifierTreeUpdate` → `treeUpdate`.
 */

const VERIFIER_NAME = /^Verifier([A-Z][A-Za-z0-9]*)$/;

/** The circuit name, or undefined when the name is not `Verifier<Circuit>`. */
export function circuitOfVerifier(verifier: string): string | undefined {
  const circuit = VERIFIER_NAME.exec(verifier)?.[1];
  return circuit === undefined ? undefined : circuit.charAt(0).toLowerCase() + circuit.slice(1);
}
