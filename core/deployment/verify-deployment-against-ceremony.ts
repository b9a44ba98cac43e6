/**
 * `ceremony verify-deployment RPC MANIFEST VERIFIERS --ceremony DIR`: the deployed verifiers
 * against the whole final verification keys of a ceremony folder, not δ alone.
 *
 * For each verifier (the manifest's, then any of the ceremony's the manifest lacks):
 *  1. the manifest entry is the final key's δ (`deployment.manifest_mismatch`), the key is bound to
 *     the transcript (core/deployment/ceremony-final-keys.ts) and its δ is not its γ;
 *  2. every constant of the final key (α1, β2, γ2, δ2, every IC point) is in the runtime code
 *     (`deployment.constant_mismatch` names the first missing, e.g. `IC[3].x`; a γ set to δ is
 *     `vkey.delta_equals_gamma`);
 *  3. where `final/compiler.json` names the solc this project ships, the runtime code is the
 *     verifier of the final key recompiled with the recorded settings, byte for byte up to the
 *     metadata trailer (`deployment.bytecode_mismatch`). Otherwise step 2 is all that was proven,
 *     and each verdict says so and why.
 * Every match lists what it proved (`checked`), so no verdict reads as more than was checked.
 *
 * A test-network ceremony's keys guard nothing (their ptau's secret is public): the report warns
 * first, whatever the verdicts, and against a known mainnet's endpoint the check is refused
 * (`deployment.test_ceremony_on_mainnet`) unless `allowTestCeremony`.
 */
import { CoordinatorError } from '../errors.ts';
import { readCeremonyFinalKeys, testCeremonyWarning, type CeremonyFinalKey } from './ceremony-final-keys.ts';
import { judgeDeployedCode } from './check-deployed-verifiers.ts';
import { compareRuntimeCode } from './compare-networks.ts';
import {
  ownEntry,
  readDeployedCodes,
  requireHttpUrl,
  UNREAD_CODE_ERRORS,
  type DeployedCode,
  type DeployedCodes,
  type ReadCodeOptions,
} from './deployed-code-reader.ts';
import { knownMainnet } from './known-mainnets.ts';
import { manifestChecks } from './manifest-entry-check.ts';
import type { UncheckedManifest } from './read-manifest-file.ts';
import type { UncheckedVerifierAddresses } from './read-verifiers-file.ts';
import { recompileVerifiers, type Recompilation } from './recompile-verifiers.ts';
import type { VerificationKeyJson } from './verification-key-json.ts';
import type { CheckReport, VerifierCheck } from './verifier-check.ts';

export interface VerifyAgainstCeremonyOptions extends ReadCodeOptions {
  rpcUrl: string;
  manifest: UncheckedManifest;
  verifiers: UncheckedVerifierAddresses;
  /** The published ceremony folder (or the coordinator's data folder). */
  ceremonyDir: string;
  /** Recompile where final/compiler.json allows (default true); false checks the constants only. */
  recompile?: boolean;
  /** Receives the code read, so `--compare` reads no contract twice. */
  onCodes?: (codes: DeployedCodes) => void;
  /** Check a test-network ceremony's keys against a known mainnet too (refused otherwise); still warned. */
  allowTestCeremony?: boolean;
}

export interface CeremonyCheckReport extends CheckReport {
  /** The hash of the transcript's last entry: the ceremony's one identifier. */
  identifier: string;
  /** Why nothing was recompiled, when nothing was (the constants are then all that was checked). */
  notRecompiled?: string;
}

interface PendingVerifier {
  check: VerifierCheck;
  key?: CeremonyFinalKey;
  code?: DeployedCode;
}

export async function verifyDeploymentAgainstCeremony(
  options: VerifyAgainstCeremonyOptions,
): Promise<CeremonyCheckReport> {
  const rpcUrl = requireHttpUrl(options.rpcUrl);
  const ceremony = await readCeremonyFinalKeys(options.ceremonyDir);
  const begun = manifestChecks(ceremony.keys, options.manifest);
  const names = begun.map(({ check }) => check.verifier);
  const read = await readDeployedCodes(
    rpcUrl,
    new Map(names.map((name) => [name, ownEntry(options.verifiers, name)])),
    options,
  );
  const warnings = testNetworkWarnings(ceremony.testNetwork, read, options.allowTestCeremony === true);
  options.onCodes?.(read);

  const pending = begun.map(({ check, key }): PendingVerifier => {
    const code = read.codes.get(check.verifier);
    if (code !== undefined && !code.ok) check.reasons.push(`[${UNREAD_CODE_ERRORS[code.kind]}] ${code.reason}`);
    return { check, key, code };
  });

  // Recompiled: the verifiers nothing has failed yet (a failed one is a MISMATCH whatever its code).
  const judged = new Map<string, VerificationKeyJson>();
  for (const { check, key, code } of pending) {
    if (key?.verificationKey === undefined || code?.ok !== true) continue;
    const verdict = judgeDeployedCode(check.verifier, code.address, code.code, key.verificationKey);
    if (!verdict.match) check.reasons.push(`[${verdict.code}] ${verdict.reason}`);
    if (check.reasons.length === 0) judged.set(check.verifier, key.verificationKey);
  }

  const recompilation: Recompilation =
    options.recompile === false
      ? { compiled: false, why: 'not asked to (--no-recompile)' }
      : await recompileVerifiers(ceremony.finalDir, judged);
  for (const { check, code } of pending) {
    const key = judged.get(check.verifier);
    if (key === undefined || code?.ok !== true) continue;
    compareWithRecompiled(check, code, key, recompilation);
    check.match = check.reasons.length === 0 && read.failure === undefined;
  }
  return {
    identifier: ceremony.identifier,
    ...(read.failure === undefined ? {} : { failure: read.failure }),
    ...(read.chain === undefined ? {} : { chain: read.chain }),
    ...(warnings.length === 0 ? {} : { warnings }),
    ...(recompilation.compiled || judged.size === 0 ? {} : { notRecompiled: recompilation.why }),
    verifiers: pending.map((p) => p.check),
  };
}

/** The warning of a test-network ceremony; refused against a known mainnet unless allowed. */
function testNetworkWarnings(why: string | undefined, read: DeployedCodes, allowed: boolean): string[] {
  if (why === undefined) return [];
  const mainnet = read.chain === undefined ? undefined : knownMainnet(read.chain.chainId);
  if (mainnet !== undefined && !allowed) {
    throw new CoordinatorError(
      'deployment.test_ceremony_on_mainnet',
      `the ceremony is a test network's (${why}), and the endpoint is ${mainnet} (chain ${read.chain!.chainId}): ` +
        "a test ceremony's keys guard nothing on a mainnet; check against the real ceremony " +
        '(or pass --allow-test-ceremony to check anyway)',
    );
  }
  return [`${testCeremonyWarning(why)}; a match says the verifiers carry keys that guard nothing`];
}

function compareWithRecompiled(
  check: VerifierCheck,
  code: Extract<DeployedCode, { ok: true }>,
  key: VerificationKeyJson,
  recompilation: Recompilation,
): void {
  const compiler = recompilation.compiled ? recompilation.compiler : undefined;
  const constants =
    `every constant of the final key (α1, β2, γ2, δ2, IC[0] to IC[${key.IC.length - 1}]) ` +
    `is in the runtime code at ${code.address}`;
  const recompiled = recompilation.compiled ? recompilation.verifiers.get(check.verifier) : undefined;
  if (recompiled) check.warnings.push(...recompiled.warnings);
  if (recompiled?.ok && compiler !== undefined) {
    const compared = compareRuntimeCode(code.code, recompiled.runtimeCode);
    if (!compared.same) {
      check.reasons.push(
        `[deployment.bytecode_mismatch] the runtime code at ${code.address} is not the verifier of the final key ` +
          `compiled with ${compiler}: they differ from byte ` +
          `${compared.firstDifferingByte} (${compared.lengths[0]} and ${compared.lengths[1]} bytes long)`,
      );
      return;
    }
    // Equal code carries every constant, each used where the verifier uses it: one statement says both.
    check.checked = [
      `the runtime code at ${code.address} is the final key's verifier compiled with ${compiler}, byte for byte ` +
        "but for the metadata trailer's contents",
    ];
    return;
  }
  const why = !recompilation.compiled ? 'see the note' : recompiled?.ok === false ? recompiled.why : 'not compared';
  check.checked = [`${constants}; not proven: that the code uses them as the verifier does (not recompiled: ${why})`];
}
