/**
 * Checks a delta manifest against the ceremony's final keys (service document, "Verifier
 * contracts", step 7): export the verification key of each final zkey and require
 * `deltax1 = vk_delta_2[0][1]` and `deltax2 = vk_delta_2[0][0]`.
 *
 * The zkey is the authority. A `<circuit>.vkey.json` is used only when the zkey is absent (an
 * auditor may hold just the published verification keys; production zkeys are large), and the
 * result then carries a warning saying it was compared with a derived file, not the key itself.
 * A key whose δ equals its γ (no Phase 2) is a MISMATCH with its own code, `vkey.delta_equals_gamma`.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as snarkjs from 'snarkjs';
import { CoordinatorError } from '../errors.ts';
import {
  deltaEntryFromVerificationKey,
  deltaEqualsGamma,
  type VerificationKeyDelta,
} from '../manifest/delta-manifest.ts';
import { DELTA_EQUALS_GAMMA, deltaEqualsGammaMessage } from '../manifest/delta-equals-gamma.ts';
import { circuitOfVerifier } from './circuit-of-verifier.ts';
import { parseDeltaEntry } from './parse-delta-entry.ts';
import type { UncheckedManifest } from './read-manifest-file.ts';
import type { CheckReport, VerifierCheck } from './verifier-check.ts';

export interface CheckManifestOptions {
  manifest: UncheckedManifest;
  /** Directory of the final keys, `<circuit>.zkey` (or, as a fallback, `<circuit>.vkey.json`). */
  finalDir: string;
}

export async function checkManifest(options: CheckManifestOptions): Promise<CheckReport> {
  await requireDirectory(options.finalDir);
  const verifiers: VerifierCheck[] = [];
  // One at a time: each export reads a whole zkey header and uses the shared curve's threads.
  for (const [verifier, entry] of Object.entries(options.manifest)) {
    verifiers.push(await checkOne(verifier, entry, options.finalDir));
  }
  return { verifiers };
}

async function requireDirectory(dir: string): Promise<void> {
  const info = await stat(dir).catch(() => undefined);
  if (!info) throw new CoordinatorError('input.file_not_found', `final key directory not found: ${dir}`);
  if (!info.isDirectory()) throw new CoordinatorError('input.invalid', `${dir} is not a directory`);
}

async function checkOne(verifier: string, entry: unknown, finalDir: string): Promise<VerifierCheck> {
  const check: VerifierCheck = { verifier, match: false, reasons: [], warnings: [] };
  const parsed = parseDeltaEntry(entry);
  if (!parsed.ok) check.reasons.push(...parsed.reasons);

  const circuit = circuitOfVerifier(verifier);
  if (circuit === undefined) {
    check.reasons.push(`name does not have the form Verifier<Circuit>, so no final key can be found for it`);
    return check;
  }

  let vkey: VerificationKeyDelta;
  try {
    vkey = await loadVerificationKey(finalDir, circuit, check);
  } catch (error) {
    check.reasons.push(error instanceof Error ? error.message : String(error));
    return check;
  }

  let keyDelta;
  try {
    keyDelta = deltaEntryFromVerificationKey(vkey);
  } catch (error) {
    check.reasons.push(`verification key of ${circuit}: ${(error as Error).message}`);
    return check;
  }
  // A key without Phase 2 is refused, whatever the manifest says (its proofs can all be forged).
  if (deltaEqualsGamma(vkey)) {
    check.reasons.push(`[${DELTA_EQUALS_GAMMA}] ${deltaEqualsGammaMessage(circuit, verifier, 'the final key')}`);
  }

  if (parsed.ok) {
    // Both sides are canonical decimals (no leading zeros), so string equality is numeric equality.
    for (const field of ['deltax1', 'deltax2'] as const) {
      if (parsed.delta[field] !== keyDelta[field]) {
        check.reasons.push(
          `${field} is ${parsed.delta[field]} in the manifest but ${keyDelta[field]} in the final key of ${circuit}`,
        );
      }
    }
  }
  check.match = check.reasons.length === 0;
  return check;
}

async function loadVerificationKey(
  finalDir: string,
  circuit: string,
  check: VerifierCheck,
): Promise<VerificationKeyDelta> {
  const zkeyPath = join(finalDir, `${circuit}.zkey`);
  if (await isFile(zkeyPath)) {
    try {
      return await snarkjs.zKey.exportVerificationKey(zkeyPath);
    } catch (error) {
      throw new Error(`cannot export the verification key of ${zkeyPath}: ${(error as Error).message}`);
    }
  }
  const vkeyPath = join(finalDir, `${circuit}.vkey.json`);
  if (!(await isFile(vkeyPath))) {
    throw new Error(`neither ${circuit}.zkey nor ${circuit}.vkey.json in ${finalDir}`);
  }
  check.warnings.push(
    `no ${circuit}.zkey; compared with ${circuit}.vkey.json, a file derived from the key, not the key itself`,
  );
  try {
    return JSON.parse(await readFile(vkeyPath, 'utf8')) as VerificationKeyDelta;
  } catch (error) {
    throw new Error(`cannot read ${vkeyPath}: ${(error as Error).message}`);
  }
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() ?? false;
}
