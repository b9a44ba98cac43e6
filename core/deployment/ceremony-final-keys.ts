/**
 * The final verification keys of a published (or the coordinator's own) ceremony folder, for the
 * deployment check: ceremony.json, the hash-chained transcript, which must end finalised, and
 * each circuit's final key. The key is exported from `final/CIRCUIT.zkey` once that file's
 * BLAKE2b-512 is the one the transcript's beacon entry records, so every key the check compares is
 * bound to the ceremony's identifier, the hash of the transcript's last entry. Without the zkey
 * (an auditor may hold the small files only) `final/CIRCUIT.vkey.json` stands in, with a warning:
 * its agreement with the final key is what `ceremony audit` checks, not this.
 *
 * A test-network ceremony (ceremony.json's `testNetwork`, or a ptau in the folder carrying the
 * development marker) is said, so no check reads its keys as guarding anything: the ptau's secret
 * is public, and anyone can forge proofs for every key built on it.
 */
import { readFile, stat } from 'node:fs/promises';
import * as snarkjs from 'snarkjs';
import { loadCeremonyConfig } from '../config/ceremony-config.ts';
import { hashFile } from '../crypto/file-hash.ts';
import { ceremonyPaths } from '../data-folder/ceremony-paths.ts';
import { CoordinatorError, type ErrorCode } from '../errors.ts';
import { readPtauSummary } from '../ptau/ptau-header.ts';
import { Transcript } from '../transcript/transcript.ts';
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
}

/** Refuses (`manifest.not_finalised`) a ceremony whose transcript has no `finalised` entry. */
export async function readCeremonyFinalKeys(dir: string): Promise<CeremonyFinalKeys> {
  const config = await loadCeremonyConfig(dir);
  const paths = ceremonyPaths(config.dataDir);
  const transcript = await Transcript.load(paths.transcriptPath, config.id);
  const entries = transcript.entries;
  if (!entries.some((entry) => entry.type === 'finalised')) {
    throw new CoordinatorError(
      'manifest.not_finalised',
      `the transcript of ${config.id} has no \`finalised\` entry (${entries.length} entries): there are no final ` +
        'keys to check the deployment against',
    );
  }
  const keys: CeremonyFinalKey[] = [];
  // One at a time: each hash reads a whole final key (up to 141 MB at 2^18).
  for (const { name: circuit, verifier } of config.circuits) {
    const key: CeremonyFinalKey = { circuit, verifier, warnings: [] };
    const beacon = entries.find((entry) => entry.type === 'beacon' && entry.circuit === circuit);
    try {
      if (beacon?.type !== 'beacon') {
        throw new CoordinatorError('chain.file_missing', `the transcript has no final key of ${circuit}`);
      }
      key.verificationKey = await loadFinalKey(paths, circuit, beacon.fileHash, key.warnings);
    } catch (error) {
      if (!(error instanceof CoordinatorError)) throw error;
      key.problem = { code: error.code, reason: error.message };
    }
    keys.push(key);
  }
  const testNetwork = await testNetworkReason(config);
  return { identifier: transcript.lastHash, finalDir: paths.finalDir, keys, ...(testNetwork ? { testNetwork } : {}) };
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
  warnings: string[],
): Promise<VerificationKeyJson> {
  const zkeyPath = paths.finalZkeyPath(circuit);
  if ((await stat(zkeyPath).catch(() => undefined))?.isFile()) {
    if ((await hashFile(zkeyPath)) !== fileHash) {
      throw new CoordinatorError(
        'chain.file_hash_mismatch',
        `final/${circuit}.zkey is not the final key the transcript records (BLAKE2b-512 differs)`,
      );
    }
    const exported = await snarkjs.zKey.exportVerificationKey(zkeyPath);
    return parseVerificationKeyJson(exported, `the verification key of final/${circuit}.zkey`);
  }
  let text: string;
  try {
    text = await readFile(paths.verificationKeyPath(circuit), 'utf8');
  } catch {
    throw new CoordinatorError('chain.file_missing', `neither final/${circuit}.zkey nor final/${circuit}.vkey.json`);
  }
  warnings.push(
    `no final/${circuit}.zkey: compared with final/${circuit}.vkey.json, which the transcript does not record; ` +
      '`ceremony audit` checks it against the final key',
  );
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CoordinatorError('input.not_json', `final/${circuit}.vkey.json is not valid JSON`);
  }
  return parseVerificationKeyJson(value, `final/${circuit}.vkey.json`);
}

/** The warning a check of a test-network ceremony's keys leads with, whatever its verdicts. */
export function testCeremonyWarning(why: string): string {
  return `TEST-NETWORK CEREMONY (${why}): its ptau's secret is public, so anyone can forge proofs for these keys`;
}
