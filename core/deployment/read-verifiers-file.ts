/**
 * Reads the verifiers file of a deployment check: verifier name → deployed contract address on
 * the network being checked. Addresses are validated per verifier by `verifyDeployment`, so a bad
 * one fails only its own line.
 */
import { readJsonObjectFile } from './read-json-object-file.ts';

/** Verifier name → address as written in the file, not yet validated. */
export type UncheckedVerifierAddresses = Readonly<Record<string, unknown>>;

export async function readVerifiersFile(path: string): Promise<UncheckedVerifierAddresses> {
  return readJsonObjectFile(path, 'verifiers');
}
