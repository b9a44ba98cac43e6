/**
 * `ceremony verify-deployment RPC MANIFEST VERIFIERS --ceremony DIR`: the deployed verifiers
 * against the whole final verification keys of a ceremony folder, not δ alone.
 *
 * For each verifier (the manifest's, then any of the ceremony's the manifest lacks):
 *  1. the manifest entry is the final key's δ (`deployment.manifest_mismatch`), the key is bound to
 *     the transcript (core/deployment/ceremony-final-keys.ts) and its δ is not its γ;
 *  2. the code is judged by the one check of deployed verifiers (check-deployed-verifiers.ts): the
 *     verifier rendered from the final key, compiled offline with the compiler `final/compiler.json`
 *     records (held to the hash the transcript's `finalised` entry commits) or the auditor's own
 *     settings, byte for byte but for the metadata trailer. Code that was not compared is a MISMATCH
 *     (`deployment.not_recompiled`); only `constantsOnly`, asked for explicitly, checks less, and its
 *     verdict says so (`constants-present`).
 * Every verdict lists what it proved (`checked`), so no verdict reads as more than was checked.
 *
 * A test-network ceremony's keys guard nothing (their ptau's secret is public): the report warns
 * first, whatever the verdicts, and against a known mainnet's endpoint the check is refused
 * (`deployment.test_ceremony_on_mainnet`) unless `allowTestCeremony`.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CoordinatorError } from '../errors.ts';
import { renderSolidityVerifier } from '../finalise/solidity-verifier.ts';
import type { VerifierCompilerSettings } from '../finalise/verifier-compiler-record.ts';
import { readCeremonyFinalKeys, testCeremonyWarning } from './ceremony-final-keys.ts';
import { judgeVerifierCodes } from './check-deployed-verifiers.ts';
import {
  ownEntry,
  readDeployedCodes,
  requireHttpUrl,
  UNREAD_CODE_ERRORS,
  type DeployedCodes,
  type ReadCodeOptions,
} from './deployed-code-reader.ts';
import { knownMainnet } from './known-mainnets.ts';
import { manifestChecks } from './manifest-entry-check.ts';
import type { UncheckedManifest } from './read-manifest-file.ts';
import type { UncheckedVerifierAddresses } from './read-verifiers-file.ts';
import { auditorCompiler, folderCompiler } from './recompile-verifiers.ts';
import type { VerificationKeyJson } from './verification-key-json.ts';
import type { CheckReport, VerifierCheck } from './verifier-check.ts';

export interface VerifyAgainstCeremonyOptions extends ReadCodeOptions {
  rpcUrl: string;
  manifest: UncheckedManifest;
  verifiers: UncheckedVerifierAddresses;
  /** The published ceremony folder (or the coordinator's data folder). */
  ceremonyDir: string;
  /** The auditor's own ceremony.json, which the folder's must agree with (core/audit/auditor-config.ts). */
  auditorConfig: string;
  /** Check the constants only (an explicit request): the verdicts are then `constants-present`, never `match`. */
  constantsOnly?: boolean;
  /** The auditor's own compiler settings, in place of the ceremony's committed record. */
  compilerSettings?: { version: string; settings: VerifierCompilerSettings };
  /** Receives the code read, so `--compare` reads no contract twice. */
  onCodes?: (codes: DeployedCodes) => void;
  /** Check a test-network ceremony's keys against a known mainnet too (refused otherwise); still warned. */
  allowTestCeremony?: boolean;
}

export interface CeremonyCheckReport extends CheckReport {
  /** The hash of the transcript's last entry: the ceremony's one identifier. */
  identifier: string;
  /** Why no verifier could be compared with its recompiled code, when none could (each is then a MISMATCH). */
  notRecompiled?: string;
}

export async function verifyDeploymentAgainstCeremony(
  options: VerifyAgainstCeremonyOptions,
): Promise<CeremonyCheckReport> {
  const rpcUrl = requireHttpUrl(options.rpcUrl);
  const ceremony = await readCeremonyFinalKeys(options.ceremonyDir, options.auditorConfig);
  const begun = manifestChecks(ceremony.keys, options.manifest);
  // A verifier the verifiers file names and nothing else does would go unchecked: a MISMATCH, said.
  for (const verifier of Object.keys(options.verifiers)) {
    if (begun.some(({ check }) => check.verifier === verifier)) continue;
    const reason =
      `[deployment.manifest_mismatch] the verifiers file names ${verifier}, which neither the manifest nor the ` +
      'ceremony names: nothing checked it';
    begun.push({ check: { verifier, match: false, reasons: [reason], warnings: [] }, key: undefined });
  }
  const names = begun.map(({ check }) => check.verifier);
  const read = await readDeployedCodes(
    rpcUrl,
    new Map(names.map((name) => [name, ownEntry(options.verifiers, name)])),
    options,
  );
  const warnings = testNetworkWarnings(ceremony.testNetwork, read, options.allowTestCeremony === true);
  options.onCodes?.(read);

  const pending = begun.map(({ check, key }) => {
    const code = read.codes.get(check.verifier);
    if (code !== undefined && !code.ok) check.reasons.push(`[${UNREAD_CODE_ERRORS[code.kind]}] ${code.reason}`);
    return { check, key, code };
  });

  // Judged: the verifiers nothing has failed yet (a failed one is a MISMATCH whatever its code).
  const judged = pending.flatMap(({ check, key, code }) =>
    key?.verificationKey !== undefined && code?.ok === true && check.reasons.length === 0
      ? [
          {
            check,
            item: { verifier: check.verifier, ...code, runtimeCode: code.code, verificationKey: key.verificationKey },
          },
        ]
      : [],
  );
  const compiler =
    options.compilerSettings !== undefined
      ? auditorCompiler(options.compilerSettings)
      : await folderCompiler(ceremony.finalDir, ceremony.compilerRecordHash);
  const mode = options.constantsOnly === true ? { constantsOnly: true as const } : { compiler };
  const verdicts = await judgeVerifierCodes(
    judged.map(({ item }) => item),
    mode,
  );
  judged.forEach(({ check }, i) => {
    const verdict = verdicts[i]!;
    if (!verdict.match) {
      check.reasons.push(`[${verdict.code}] ${verdict.reason}`);
      return;
    }
    check.match = read.failure === undefined;
    check.checked = [verdict.proved];
    if (verdict.weaker !== undefined) {
      check.weaker = verdict.weaker;
      check.notProved = verdict.notProved;
    }
  });
  for (const { check, item } of judged) await warnOfPublishedSource(ceremony.finalDir, check, item.verificationKey);
  return {
    identifier: ceremony.identifier,
    ...(read.failure === undefined ? {} : { failure: read.failure }),
    ...(read.chain === undefined ? {} : { chain: read.chain }),
    ...(warnings.length === 0 ? {} : { warnings }),
    ...(compiler.ok || options.constantsOnly === true || judged.length === 0 ? {} : { notRecompiled: compiler.why }),
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

/**
 * A warning when the published source is not the verifier rendered from the final key (the code is
 * judged against the latter).
 */
async function warnOfPublishedSource(finalDir: string, check: VerifierCheck, key: VerificationKeyJson): Promise<void> {
  const published = await readFile(path.join(finalDir, `${check.verifier}.sol`), 'utf8').catch(() => undefined);
  if (published === (await renderSolidityVerifier(key, check.verifier))) return;
  const why = published === undefined ? 'is missing' : 'is not the verifier snarkjs renders from the final key';
  check.warnings.push(
    `final/${check.verifier}.sol ${why}; the deployed code was judged against the verifier rendered from the final key`,
  );
}
