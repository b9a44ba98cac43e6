/**
 * The final verification keys of a published (or the coordinator's own) ceremony folder, for the
 * deployment check: ceremony.json, the hash-chained transcript, which must end finalised, and
 * each circuit's final key. The key is exported from `final/CIRCUIT.zkey` once that file's
 * BLAKE2b-512 is the one the transcript's beacon entry records, so every key the check compares is
 * bound to the ceremony's identifier, the hash of the transcript's last entry. A folder without the
 * zkey fails that circuit (`chain.file_missing`): `final/CIRCUIT.vkey.json` is the coordinator's
 * word, which the transcript does not commit, so no verdict rests on it.
 *
 * The circuits and verifier names are the auditor's ceremony.json's (the folder's must agree), and
 * which verifier name belongs to which final key is the transcript's word too:
 * the circuits ceremony.json names must be the transcript's chains, and each circuit's verifier,
 * rendered from its final key under that name, must hash to the source the `finalised` entry
 * commits for that name (`deployment.verifier_name_mismatch`), so a folder whose ceremony.json
 * swaps two verifier names, or drops a circuit, matches nothing.
 *
 * A test-network ceremony (ceremony.json's `testNetwork`, or a ptau in the folder carrying the
 * development marker) is said, so no check reads its keys as guarding anything: the ptau's secret
 * is public, and anyone can forge proofs for every key built on it.
 */
import { stat } from 'node:fs/promises';
import * as snarkjs from 'snarkjs';
import { loadCeremonyConfig, type CeremonyConfig } from '../config/ceremony-config.ts';
import { readAuditorConfig, refuseOtherConfig } from '../audit/auditor-config.ts';
import { hashBytes, hashFile } from '../crypto/file-hash.ts';
import { renderSolidityVerifier } from '../finalise/solidity-verifier.ts';
import { ceremonyPaths } from '../data-folder/ceremony-paths.ts';
import { CoordinatorError, type ErrorCode } from '../errors.ts';
import { readPtauSummary } from '../ptau/ptau-header.ts';
import { Transcript, type TranscriptEntry } from '../transcript/transcript.ts';
import { parseVerificationKeyJson, type VerificationKeyJson } from './verification-key-json.ts';

export interface CeremonyFinalKey {
  circuit: string;
  verifier: string;
  /** Absent when it could not be had; `problem` says why. */
  verificationKey?: VerificationKeyJson;
  problem?: { code: ErrorCode; reason: string };
  warnings: string[];
}

export interface CeremonyFinalKeys {
  /** The hash of the transcript's last entry (its `finalised` entry): the ceremony's one identifier. */
  identifier: string;
  finalDir: string;
  /** In ceremony.json's order. */
  keys: CeremonyFinalKey[];
  /** Why the ceremony is a test network's (its keys guard nothing), or undefined when it is not. */
  testNetwork?: string;
  /** The hash of final/compiler.json the `finalised` entry commits, if it commits one. */
  compilerRecordHash?: string;
}

/**
 * The final keys of the ceremony folder `dir`, by the auditor's ceremony.json (`auditorConfig`): the
 * folder's must agree with it (`config.publication_mismatch`), so the circuits, their verifier names
 * and whether the ceremony is a test network's are the auditor's, never the coordinator's. Refuses
 * (`manifest.not_finalised`) a ceremony whose transcript has no `finalised` entry.
 */
export async function readCeremonyFinalKeys(dir: string, auditorConfig: string): Promise<CeremonyFinalKeys> {
  const publication = await loadCeremonyConfig(dir);
  const { config } = await readAuditorConfig(auditorConfig, publication.dataDir);
  refuseOtherConfig(config, publication, "the folder's ceremony.json", auditorConfig);
  const paths = ceremonyPaths(config.dataDir);
  const transcript = await Transcript.load(paths.transcriptPath, config.id);
  const entries = transcript.entries;
  const finalised = entries.find((entry) => entry.type === 'finalised');
  if (finalised?.type !== 'finalised') {
    throw new CoordinatorError(
      'manifest.not_finalised',
      `the transcript of ${config.id} has no \`finalised\` entry (${entries.length} entries): there are no final ` +
        'keys to check the deployment against',
    );
  }
  refuseOtherCircuits(config, entries, finalised.verifierSourceHashes);
  const keys: CeremonyFinalKey[] = [];
  // One at a time: each hash reads a whole final key (up to 141 MB at 2^18).
  for (const { name: circuit, verifier } of config.circuits) {
    const key: CeremonyFinalKey = { circuit, verifier, warnings: [] };
    const beacon = entries.find((entry) => entry.type === 'beacon' && entry.circuit === circuit);
    try {
      if (beacon?.type !== 'beacon') {
        throw new CoordinatorError('chain.file_missing', `the transcript has no final key of ${circuit}`);
      }
      const verificationKey = await loadFinalKey(paths, circuit, beacon.fileHash);
      await requireCommittedVerifier(circuit, verifier, verificationKey, finalised.verifierSourceHashes);
      key.verificationKey = verificationKey;
      if (finalised.verifierSourceHashes === undefined) {
        key.warnings.push(
          `the transcript commits no verifier sources (a ceremony finalised before they were), so that ${verifier} ` +
            `is ${circuit}'s verifier is ceremony.json's word`,
        );
      }
    } catch (error) {
      if (!(error instanceof CoordinatorError)) throw error;
      key.problem = { code: error.code, reason: error.message };
    }
    keys.push(key);
  }
  const testNetwork = await testNetworkReason(config);
  return {
    identifier: transcript.lastHash,
    finalDir: paths.finalDir,
    keys,
    ...(testNetwork ? { testNetwork } : {}),
    ...(finalised.compilerRecordHash ? { compilerRecordHash: finalised.compilerRecordHash } : {}),
  };
}

/**
 * Refuses a ceremony.json whose circuits are not the transcript's chains, or (when the `finalised`
 * entry commits the verifier sources) whose verifier names are not the committed ones.
 */
function refuseOtherCircuits(
  config: CeremonyConfig,
  entries: readonly TranscriptEntry[],
  committed: Record<string, string> | undefined,
): void {
  const named = config.circuits.map((c) => c.name);
  const chains = entries.flatMap((entry) => (entry.type === 'init' ? [entry.circuit] : []));
  const differ = (a: readonly string[], b: readonly string[]) =>
    a.length !== b.length || [...a].sort().some((name, i) => name !== [...b].sort()[i]);
  if (differ(named, chains)) {
    throw new CoordinatorError(
      'deployment.verifier_name_mismatch',
      `ceremony.json names the circuits ${named.join(', ')}; the transcript has the chains ${chains.join(', ')}`,
    );
  }
  const verifiers = config.circuits.map((c) => c.verifier);
  if (committed !== undefined && differ(verifiers, Object.keys(committed))) {
    throw new CoordinatorError(
      'deployment.verifier_name_mismatch',
      `ceremony.json names the verifiers ${verifiers.join(', ')}; the transcript's finalised entry commits ` +
        `${Object.keys(committed).join(', ')}`,
    );
  }
}

/** `verifier` is the name the `finalised` entry commits for this final key: its rendered source hashes to it. */
async function requireCommittedVerifier(
  circuit: string,
  verifier: string,
  key: VerificationKeyJson,
  committed: Record<string, string> | undefined,
): Promise<void> {
  if (committed === undefined) return;
  if (hashBytes(await renderSolidityVerifier(key, verifier)) !== committed[verifier]) {
    throw new CoordinatorError(
      'deployment.verifier_name_mismatch',
      `${verifier} is not the verifier of ${circuit}'s final key by the transcript: its source rendered from ` +
        'that key is not the one the finalised entry commits for that name',
    );
  }
}

/**
 * Why the ceremony is a test network's: its own word, or its ptau's marker. A ptau absent from the
 * folder (a publication without it) or unreadable tells nothing here; the audit pins and checks it.
 */
export async function testNetworkReason(
  config: Awaited<ReturnType<typeof loadCeremonyConfig>>,
): Promise<string | undefined> {
  const insecurePtau = await readPtauSummary(config.ptauPath).then(
    (ptau) => ptau.insecure,
    () => false,
  );
  const why = [
    config.testNetwork ? 'ceremony.json says "testNetwork": true' : undefined,
    insecurePtau ? `its ptau (${config.ptau}) is the development one` : undefined,
  ].filter((reason): reason is string => reason !== undefined);
  return why.length === 0 ? undefined : why.join(' and ');
}

async function loadFinalKey(
  paths: ReturnType<typeof ceremonyPaths>,
  circuit: string,
  fileHash: string,
): Promise<VerificationKeyJson> {
  const zkeyPath = paths.finalZkeyPath(circuit);
  if (!(await stat(zkeyPath).catch(() => undefined))?.isFile()) {
    throw new CoordinatorError(
      'chain.file_missing',
      `no final/${circuit}.zkey: the verification key is taken from the final key the transcript records, never ` +
        `from final/${circuit}.vkey.json alone (fetch the final keys with \`ceremony fetch\`)`,
    );
  }
  if ((await hashFile(zkeyPath)) !== fileHash) {
    throw new CoordinatorError(
      'chain.file_hash_mismatch',
      `final/${circuit}.zkey is not the final key the transcript records (BLAKE2b-512 differs)`,
    );
  }
  const exported = await snarkjs.zKey.exportVerificationKey(zkeyPath);
  return parseVerificationKeyJson(exported, `the verification key of final/${circuit}.zkey`);
}

/** The warning a check of a test-network ceremony's keys leads with, whatever its verdicts. */
export function testCeremonyWarning(why: string): string {
  return `TEST-NETWORK CEREMONY (${why}): its ptau's secret is public, so anyone can forge proofs for these keys`;
}
