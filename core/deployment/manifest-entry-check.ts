/**
 * One verifier's manifest entry against a ceremony's final key, shared by `check-manifest` and
 * `verify-deployment --ceremony`: present, naming a verifier of the ceremony (ceremony.json's
 * `verifier` field, not a naming convention), and the final key's δ. Each failure is a reason
 * with `deployment.manifest_mismatch`.
 */
import { deltaEntryFromVerificationKey, type DeltaEntry } from '../manifest/delta-manifest.ts';
import type { CeremonyFinalKey } from './ceremony-final-keys.ts';
import { parseDeltaEntry } from './parse-delta-entry.ts';
import type { UncheckedManifest } from './read-manifest-file.ts';
import type { VerifierCheck } from './verifier-check.ts';

/** Adds to `check.reasons` why the manifest's entry of `check.verifier` is not `key`'s δ, if it is not. */
function checkManifestEntry(
  check: VerifierCheck,
  key: CeremonyFinalKey | undefined,
  manifest: UncheckedManifest,
): void {
  const { verifier } = check;
  const mismatch = (why: string) => check.reasons.push(`[deployment.manifest_mismatch] ${why}`);
  if (!Object.hasOwn(manifest, verifier)) {
    mismatch(`the manifest has no entry for ${verifier}, a verifier of the ceremony`);
    return;
  }
  if (key === undefined) {
    mismatch(`${verifier} is not a verifier of the ceremony`);
    return;
  }
  const parsed = parseDeltaEntry(manifest[verifier]);
  if (!parsed.ok) {
    for (const reason of parsed.reasons) mismatch(reason);
    return;
  }
  if (key.verificationKey === undefined) return;
  const keyDelta: DeltaEntry = deltaEntryFromVerificationKey(key.verificationKey);
  // Both sides are canonical decimals (no leading zeros), so string equality is numeric equality.
  for (const field of ['deltax1', 'deltax2'] as const) {
    if (parsed.delta[field] !== keyDelta[field]) {
      mismatch(
        `${field} is ${parsed.delta[field]} in the manifest but ${keyDelta[field]} in the final key of ${key.circuit}`,
      );
    }
  }
}

/**
 * Each verifier the manifest or the ceremony names (the manifest's first), its final key, and its
 * check begun: the manifest entry against the key, the key's own problem and warnings.
 */
export function manifestChecks(
  keys: readonly CeremonyFinalKey[],
  manifest: UncheckedManifest,
): Array<{ check: VerifierCheck; key: CeremonyFinalKey | undefined }> {
  const byVerifier = new Map(keys.map((key) => [key.verifier, key]));
  const names = new Set([...Object.keys(manifest), ...byVerifier.keys()]);
  return [...names].map((verifier) => {
    const check: VerifierCheck = { verifier, match: false, reasons: [], warnings: [] };
    const key = byVerifier.get(verifier);
    checkManifestEntry(check, key, manifest);
    if (key?.problem) check.reasons.push(`[${key.problem.code}] ${key.problem.reason}`);
    if (key) check.warnings.push(...key.warnings);
    return { check, key };
  });
}
