/**
 * Part of the audit's `manifest` finding: the files that say what the deployed verifiers must be are the
 * ones the transcript's `finalised` entry commits, and say it truly. `final/compiler.json` hashes to
 * the entry's `compilerRecordHash`, lies within the documented settings
 * (core/finalise/verifier-compiler-record.ts) and lists exactly the ceremony's verifiers, each from
 * its own source; every `final/VerifierX.sol` hashes to its `verifierSourceHashes` entry and is the
 * verifier snarkjs renders from the final key the audit just verified. A deployer who compiles the
 * published sources as the record says then deploys code that `verify-deployment --ceremony`
 * matches, and a coordinator cannot swap either file afterwards.
 *
 * A `finalised` entry that commits neither (a ceremony finalised before they were committed) fails
 * with its own code: the audit does not vouch for files nobody committed to.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { hashBytes } from '../crypto/file-hash.ts';
import { CoordinatorError } from '../errors.ts';
import { renderSolidityVerifier } from '../finalise/solidity-verifier.ts';
import {
  parseVerifierCompilerRecord,
  readVerifierCompilerRecordBytes,
  VERIFIER_COMPILER_RECORD_FILE,
} from '../finalise/verifier-compiler-record.ts';

export interface CommittedVerifierFiles {
  compilerRecordHash?: string;
  verifierSourceHashes?: Record<string, string>;
}

const mismatch = (why: string) => new CoordinatorError('audit.verifier_files_mismatch', why);
const sameNames = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && [...a].sort().every((name, i) => name === [...b].sort()[i]);

/**
 * Checks the compiler record and each verifier source of `finalDir` against `committed` (the
 * `finalised` entry) and `finalKeys` (verifier name → the final key's exported verification key, in
 * the ceremony's order). Returns the finding's summary; throws its refusal.
 */
export async function checkVerifierFiles(
  finalDir: string,
  committed: CommittedVerifierFiles,
  finalKeys: ReadonlyMap<string, object>,
): Promise<string> {
  const { compilerRecordHash, verifierSourceHashes } = committed;
  if (compilerRecordHash === undefined || verifierSourceHashes === undefined) {
    throw new CoordinatorError(
      'audit.verifier_files_uncommitted',
      "the transcript's finalised entry commits no compiler record or verifier sources, so final/compiler.json " +
        'and final/Verifier*.sol are the coordinator’s word: check each deployment against the final keys with ' +
        '`verify-deployment --ceremony DIR --compiler-settings …` (the deployer’s settings)',
    );
  }
  const verifiers = [...finalKeys.keys()];
  const recordFile = `final/${VERIFIER_COMPILER_RECORD_FILE}`;
  const record = await readVerifierCompilerRecordBytes(finalDir);
  if (record === undefined) throw mismatch(`${recordFile} is missing (the transcript commits one)`);
  if (hashBytes(record) !== compilerRecordHash)
    throw mismatch(`${recordFile} is not the record the transcript commits (its BLAKE2b-512 differs)`);
  const parsed = parseVerifierCompilerRecord(record.toString('utf8'), recordFile);
  const listed = Object.keys(parsed.verifiers);
  if (!sameNames(listed, verifiers))
    throw mismatch(`${recordFile} lists ${listed.length} verifiers, not the ceremony's ${verifiers.join(', ')}`);
  for (const [verifier, entry] of Object.entries(parsed.verifiers)) {
    if (entry.source !== `${verifier}.sol` || entry.contract !== verifier)
      throw mismatch(`${recordFile} does not compile ${verifier} from ${verifier}.sol as contract ${verifier}`);
  }
  const committedNames = Object.keys(verifierSourceHashes);
  if (!sameNames(committedNames, verifiers))
    throw mismatch(`the finalised entry commits the sources of ${committedNames.length} verifiers, not the ceremony's`);
  for (const [verifier, key] of finalKeys) {
    const file = `final/${verifier}.sol`;
    const source = await readFile(path.join(finalDir, `${verifier}.sol`)).catch(() => undefined);
    if (source === undefined) throw mismatch(`${file} is missing (the transcript commits it)`);
    if (hashBytes(source) !== verifierSourceHashes[verifier])
      throw mismatch(`${file} is not the source the transcript commits (its BLAKE2b-512 differs)`);
    if (source.toString('utf8') !== (await renderSolidityVerifier(key, verifier)))
      throw mismatch(`${file} is not the verifier snarkjs renders from the final key`);
  }
  return (
    `${recordFile} (solc ${parsed.compiler.version} ${JSON.stringify(parsed.settings)}) and the ` +
    `${verifiers.length} verifier sources are the ones the transcript commits, each the verifier of its final key`
  );
}
