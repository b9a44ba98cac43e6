/**
 * Reads a delta manifest for checking. Only the outer shape is enforced here (a non-empty JSON
 * object); each entry is judged on its own by `parseDeltaEntry`, so one broken entry makes that
 * one verifier a MISMATCH instead of hiding the result of the others.
 */
import { CoordinatorError } from '../errors.ts';
import { readJsonObjectFile } from './read-json-object-file.ts';

/** A manifest as read from disk: verifier name → entry not yet validated, in file order. */
export type UncheckedManifest = Readonly<Record<string, unknown>>;

export async function readManifestFile(path: string): Promise<UncheckedManifest> {
  const manifest = await readJsonObjectFile(path, 'manifest');
  // An empty manifest would let every check pass while checking nothing.
  if (Object.keys(manifest).length === 0) {
    throw new CoordinatorError('input.invalid', `manifest file ${path} lists no verifiers`);
  }
  return manifest;
}
