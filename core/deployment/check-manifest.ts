/**
 * Checks a delta manifest against a ceremony's final keys (service document, "Verifier
 * contracts", step 7), from the ceremony folder (published, or the coordinator's own): every
 * verifier ceremony.json names must have an entry, every entry must name one of them (its
 * `verifier` field, not a naming convention), and each entry must be `deltax1 = vk_delta_2[0][1]`,
 * `deltax2 = vk_delta_2[0][0]` of its final key; each failure is `deployment.manifest_mismatch`.
 *
 * The keys are read as `verify-deployment --ceremony` reads them (ceremony-final-keys.ts): the
 * transcript must end finalised, and `final/CIRCUIT.zkey` counts only once its BLAKE2b-512 is the
 * one the transcript's beacon entry records; without it the verifier is a MISMATCH
 * (`chain.file_missing`: `final/CIRCUIT.vkey.json` is not committed); the verifier names are the
 * ones the transcript commits (`deployment.verifier_name_mismatch`). A key whose δ equals its γ (no
 * Phase 2) is a MISMATCH with its own code, `vkey.delta_equals_gamma`.
 */
import { stat } from 'node:fs/promises';
import { CoordinatorError, isCoordinatorError } from '../errors.ts';
import { deltaEqualsGamma } from '../manifest/delta-manifest.ts';
import { DELTA_EQUALS_GAMMA, deltaEqualsGammaMessage } from '../manifest/delta-equals-gamma.ts';
import { readCeremonyFinalKeys, testCeremonyWarning, type CeremonyFinalKeys } from './ceremony-final-keys.ts';
import { manifestChecks } from './manifest-entry-check.ts';
import type { UncheckedManifest } from './read-manifest-file.ts';
import type { CheckReport, VerifierCheck } from './verifier-check.ts';

export interface CheckManifestOptions {
  manifest: UncheckedManifest;
  /** The ceremony folder: ceremony.json, transcript/, final/. */
  ceremonyDir: string;
  /** The auditor's own ceremony.json, which the folder's must agree with (core/audit/auditor-config.ts). */
  auditorConfig: string;
}

export interface ManifestCheckReport extends CheckReport {
  /** The hash of the transcript's last entry: the ceremony's one identifier. */
  identifier: string;
}

/** One verdict per verifier: the manifest's, then any of the ceremony's the manifest lacks. */
export async function checkManifest(options: CheckManifestOptions): Promise<ManifestCheckReport> {
  const ceremony = await readCeremony(options.ceremonyDir, options.auditorConfig);
  const verifiers = manifestChecks(ceremony.keys, options.manifest).map(({ check, key }): VerifierCheck => {
    const { verifier } = check;
    // A key without Phase 2 is refused, whatever the manifest says (its proofs can all be forged).
    if (key?.verificationKey !== undefined && deltaEqualsGamma(key.verificationKey)) {
      check.reasons.push(`[${DELTA_EQUALS_GAMMA}] ${deltaEqualsGammaMessage(key.circuit, verifier, 'the final key')}`);
    }
    check.match = check.reasons.length === 0;
    return check;
  });
  // A test network's keys guard nothing (its ptau's secret is public): a match must not read as more.
  const warnings = ceremony.testNetwork ? [testCeremonyWarning(ceremony.testNetwork)] : [];
  return { identifier: ceremony.identifier, ...(warnings.length > 0 ? { warnings } : {}), verifiers };
}

/** The final keys, with the folder named wrongly said as a usage error (exit 2). */
async function readCeremony(dir: string, auditorConfig: string): Promise<CeremonyFinalKeys> {
  const info = await stat(dir).catch(() => undefined);
  if (!info) throw new CoordinatorError('input.file_not_found', `ceremony folder not found: ${dir}`);
  if (!info.isDirectory()) throw new CoordinatorError('input.invalid', `${dir} is not a folder`);
  try {
    return await readCeremonyFinalKeys(dir, auditorConfig);
  } catch (error) {
    if (!isCoordinatorError(error, 'config.not_found')) throw error;
    throw new CoordinatorError(
      'input.invalid',
      `${dir} is not a ceremony folder: it has no ceremony.json (give the published folder, not its final/)`,
    );
  }
}
