/**
 * Which compiler a deployed verifier is judged against, and the verifiers it compiles.
 *
 * The compiler comes from one of two places, and from nowhere else:
 *  - the ceremony's `final/compiler.json`, only when its BLAKE2b-512 is the one the transcript's
 *    `finalised` entry commits and it lies within the documented settings
 *    (core/finalise/verifier-compiler-record.ts);
 *  - the auditor's own settings (`--compiler-settings`), for contracts compiled elsewhere.
 * Anything else (no record, another one, an uncommitted one, another solc release, a field outside
 * the set) is a resolution that failed, with why: the caller then judges no code as the verifier
 * (`deployment.not_recompiled`), never the constants alone.
 *
 * Each source is snarkjs's verifier rendered from the final verification key, compiled offline with
 * the solc this project ships, so runtime code equal to the result is the verifier of that key and
 * nothing else.
 */
import type { Hex } from 'viem';
import { hashBytes } from '../crypto/file-hash.ts';
import { isCoordinatorError } from '../errors.ts';
import {
  describeCompiler,
  parseVerifierCompilerRecord,
  readVerifierCompilerRecordBytes,
  VERIFIER_COMPILER_RECORD_FILE,
  type VerifierCompilerSettings,
} from '../finalise/verifier-compiler-record.ts';
import { renderSolidityVerifier } from '../finalise/solidity-verifier.ts';
import { compileWithBundledSolc, type SolcStandardOutput } from './bundled-solc.ts';
import type { VerificationKeyJson } from './verification-key-json.ts';

export type RecompiledVerifier = { ok: true; runtimeCode: Hex } | { ok: false; why: string };

export type VerifierCompiler =
  | {
      ok: true;
      version: string;
      settings: VerifierCompilerSettings;
      /** Where the settings come from, for verdicts: "final/compiler.json, committed in the transcript". */
      from: string;
      /** The record's verifiers (name → source and contract); absent for the auditor's settings (every verifier). */
      listed?: ReadonlyMap<string, { source: string; contract: string }>;
    }
  | { ok: false; why: string };

/** `solc 0.8.37 {…}, from …`: how a verdict names the compiler it compared with. */
export function compilerLabel(compiler: Extract<VerifierCompiler, { ok: true }>): string {
  return `${describeCompiler(compiler.version, compiler.settings)} (${compiler.from})`;
}

/**
 * The compiler the ceremony's own record gives, held to the hash the transcript's `finalised` entry
 * commits (`committedHash`; undefined when the entry commits none, or there is no such entry).
 */
export function committedCompiler(record: Uint8Array | undefined, committedHash: string | undefined): VerifierCompiler {
  const file = `final/${VERIFIER_COMPILER_RECORD_FILE}`;
  if (committedHash === undefined) {
    return {
      ok: false,
      why:
        "the transcript's finalised entry commits no compiler record, so the ceremony's word on how its verifiers " +
        "compile is nobody's: give the deployer's settings with --compiler-settings",
    };
  }
  if (record === undefined) return { ok: false, why: `${file} is missing (the transcript commits one)` };
  if (hashBytes(record) !== committedHash) {
    return { ok: false, why: `${file} is not the record the transcript commits (its BLAKE2b-512 differs)` };
  }
  try {
    const parsed = parseVerifierCompilerRecord(Buffer.from(record).toString('utf8'), file);
    return {
      ok: true,
      version: parsed.compiler.version,
      settings: parsed.settings,
      from: `${file}, committed in the transcript`,
      listed: new Map(Object.entries(parsed.verifiers)),
    };
  } catch (error) {
    if (isCoordinatorError(error)) return { ok: false, why: error.message };
    throw error;
  }
}

/** `committedCompiler` of the record in a ceremony folder's `finalDir` (a refused read: a failed resolution). */
export async function folderCompiler(finalDir: string, committedHash: string | undefined): Promise<VerifierCompiler> {
  try {
    return committedCompiler(await readVerifierCompilerRecordBytes(finalDir), committedHash);
  } catch (error) {
    if (isCoordinatorError(error)) return { ok: false, why: error.message };
    return { ok: false, why: `final/${VERIFIER_COMPILER_RECORD_FILE} cannot be read` };
  }
}

/** The auditor's own settings (already held to the bounds: parseAuditorCompilerSettings). */
export function auditorCompiler(given: { version: string; settings: VerifierCompilerSettings }): VerifierCompiler {
  return { ok: true, ...given, from: 'your --compiler-settings' };
}

/**
 * Recompiles the verifier of each key in `keys` (verifier name → final verification key) in one solc
 * call. A verifier the record does not list, or lists under another contract, is not compiled.
 */
export async function recompileVerifiers(
  compiler: Extract<VerifierCompiler, { ok: true }>,
  keys: ReadonlyMap<string, VerificationKeyJson>,
): Promise<Map<string, RecompiledVerifier>> {
  const verifiers = new Map<string, RecompiledVerifier>();
  const sources: Record<string, { content: string }> = {};
  const wanted = new Map<string, string>();
  for (const [verifier, key] of keys) {
    const entry = compiler.listed === undefined ? { contract: verifier } : compiler.listed.get(verifier);
    if (entry?.contract !== verifier) {
      const why = entry === undefined ? 'does not list' : 'names another contract for';
      verifiers.set(verifier, { ok: false, why: `final/${VERIFIER_COMPILER_RECORD_FILE} ${why} ${verifier}` });
      continue;
    }
    // Source names are the check's own, so no path from a record reaches the compiler.
    const source = `${verifier}.sol`;
    sources[source] = { content: await renderSolidityVerifier(key, verifier) };
    wanted.set(verifier, source);
  }
  if (wanted.size === 0) return verifiers;

  let output: SolcStandardOutput;
  try {
    output = await compileWithBundledSolc(standardJsonInput(compiler.settings, sources));
  } catch (error) {
    // solc-js itself failed (not installed, out of memory): nothing was compiled, which is said, not hidden.
    const why = `solc failed: ${error instanceof Error ? error.message.split('\n')[0]!.slice(0, 200) : 'unknown'}`;
    for (const verifier of wanted.keys()) verifiers.set(verifier, { ok: false, why });
    return verifiers;
  }
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error');
  for (const [verifier, source] of wanted) {
    const compiled = output.contracts?.[source]?.[verifier]?.evm.deployedBytecode;
    if (errors.length > 0 || compiled === undefined) {
      const first =
        errors[0]?.formattedMessage.split('\n')[0]?.slice(0, 200) ?? `no contract ${verifier} in the output`;
      verifiers.set(verifier, { ok: false, why: `solc did not compile it with those settings: ${first}` });
    } else if (Object.keys(compiled.immutableReferences ?? {}).length > 0) {
      // Immutables are written at deployment: the code cannot be compared byte for byte.
      verifiers.set(verifier, { ok: false, why: 'the compiled verifier has immutables' });
    } else {
      verifiers.set(verifier, { ok: true, runtimeCode: `0x${compiled.object}` });
    }
  }
  return verifiers;
}

function standardJsonInput(settings: VerifierCompilerSettings, sources: Record<string, { content: string }>): unknown {
  return {
    language: 'Solidity',
    sources,
    settings: {
      ...settings,
      outputSelection: { '*': { '*': ['evm.deployedBytecode.object', 'evm.deployedBytecode.immutableReferences'] } },
    },
  };
}
