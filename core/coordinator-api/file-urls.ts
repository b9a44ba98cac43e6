/**
 * Where the coordinator serves each published file, and the name a chain's key has in a data
 * folder: one definition for the public page's download links and `ceremony fetch`, which lays the
 * files out as `ceremony audit` reads them. No `node:` imports: the page bundles it.
 */

/** A chain's key in a data folder (chains/CIRCUIT/…) and as a download's name. */
export function zkeyFileName(circuit: string, index: number): string {
  return `${circuit}_${String(index).padStart(4, '0')}.zkey`;
}

export function zkeyUrl(circuit: string, index: number): string {
  return `/api/circuits/${encodeURIComponent(circuit)}/zkeys/${index}`;
}

export function r1csUrl(circuit: string): string {
  return `/api/circuits/${encodeURIComponent(circuit)}/r1cs`;
}

/** A file of final/ (CIRCUIT.zkey, CIRCUIT.vkey.json, VERIFIER.sol, compiler.json). */
export function finalFileUrl(name: string): string {
  return `/api/final/${encodeURIComponent(name)}`;
}
