/**
 * Recompiles the verifiers of the final keys as `final/compiler.json` says (core/finalise/
 * verifier-compiler-record.ts), with the solc this project ships, offline: each source is the
 * snarkjs verifier rendered from the final verification key (the one `ceremony finalise` writes
 * as `final/VerifierX.sol`; a published file that differs is said), so runtime code equal to the
 * result is the verifier of that key and nothing else. Where the record names another compiler
 * release, or there is no record, nothing is compiled and the reason says so: the caller then
 * relies on the constants alone and must say that too.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Hex } from 'viem';
import { readVerifierCompilerRecord, type VerifierCompilerRecord } from '../finalise/verifier-compiler-record.ts';
import { renderSolidityVerifier } from '../finalise/solidity-verifier.ts';
import { bundledSolcVersion, compileWithBundledSolc, type SolcStandardOutput } from './bundled-solc.ts';
import type { VerificationKeyJson } from './verification-key-json.ts';

export type RecompiledVerifier =
  { ok: true; runtimeCode: Hex; warnings: string[] } | { ok: false; why: string; warnings: string[] };

export type Recompilation =
  | { compiled: false; why: string }
  | {
      compiled: true;
      /** e.g. `solc 0.8.37 {"optimizer":{"enabled":true,"runs":200},"evmVersion":"paris"}` */
      compiler: string;
      verifiers: Map<string, RecompiledVerifier>;
    };

/** Recompiles the verifier of each key in `keys` (verifier name → final verification key). */
export async function recompileVerifiers(
  finalDir: string,
  keys: ReadonlyMap<string, VerificationKeyJson>,
): Promise<Recompilation> {
  const record = await readVerifierCompilerRecord(finalDir);
  if (record === undefined) {
    return { compiled: false, why: 'the ceremony folder has no final/compiler.json saying how its verifiers compile' };
  }
  const bundled = bundledSolcVersion();
  if (record.compiler.version !== bundled) {
    return {
      compiled: false,
      why:
        `final/compiler.json records solc ${record.compiler.version}, and this check ships solc ${bundled} ` +
        '(it never downloads a compiler)',
    };
  }
  const compiler = `solc ${bundled} ${JSON.stringify(record.settings)}`;
  const verifiers = new Map<string, RecompiledVerifier>();
  const sources: Record<string, { content: string }> = {};
  const wanted = new Map<string, { source: string; contract: string; warnings: string[] }>();
  for (const [verifier, key] of keys) {
    const entry = Object.hasOwn(record.verifiers, verifier) ? record.verifiers[verifier] : undefined;
    if (entry === undefined || entry.contract !== verifier) {
      verifiers.set(verifier, { ok: false, why: `final/compiler.json does not list ${verifier}`, warnings: [] });
      continue;
    }
    const content = await renderSolidityVerifier(key, verifier);
    const warnings = await comparePublishedSource(finalDir, entry.source, content);
    sources[entry.source] = { content };
    wanted.set(verifier, { ...entry, warnings });
  }
  if (wanted.size === 0) return { compiled: true, compiler, verifiers };

  let output: SolcStandardOutput;
  try {
    output = await compileWithBundledSolc(standardJsonInput(record, sources));
  } catch (error) {
    // solc-js itself failed (not installed, out of memory): nothing was compiled, which is said, not hidden.
    const why = `solc failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
    for (const [verifier, { warnings }] of wanted) verifiers.set(verifier, { ok: false, why, warnings });
    return { compiled: true, compiler, verifiers };
  }
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error');
  for (const [verifier, { source, contract, warnings }] of wanted) {
    const compiled = output.contracts?.[source]?.[contract]?.evm.deployedBytecode;
    if (errors.length > 0 || compiled === undefined) {
      const first = errors[0]?.formattedMessage.split('\n')[0] ?? `no contract ${contract} in the output`;
      verifiers.set(verifier, {
        ok: false,
        why: `solc did not compile it with the recorded settings: ${first}`,
        warnings,
      });
    } else if (Object.keys(compiled.immutableReferences ?? {}).length > 0) {
      // Immutables are written at deployment: the code cannot be compared byte for byte.
      verifiers.set(verifier, { ok: false, why: 'the compiled verifier has immutables', warnings });
    } else {
      verifiers.set(verifier, { ok: true, runtimeCode: `0x${compiled.object}`, warnings });
    }
  }
  return { compiled: true, compiler, verifiers };
}

function standardJsonInput(record: VerifierCompilerRecord, sources: Record<string, { content: string }>): unknown {
  return {
    language: 'Solidity',
    sources,
    settings: {
      ...record.settings,
      outputSelection: { '*': { '*': ['evm.deployedBytecode.object', 'evm.deployedBytecode.immutableReferences'] } },
    },
  };
}

/** A warning when the published source is not the one rendered from the final key. */
async function comparePublishedSource(finalDir: string, source: string, rendered: string): Promise<string[]> {
  const published = await readFile(path.join(finalDir, source), 'utf8').catch(() => undefined);
  if (published === rendered) return [];
  const why = published === undefined ? 'is missing' : 'is not the verifier snarkjs renders from the final key';
  return [`final/${source} ${why}; the verifier rendered from the final key was compiled and judged`];
}
