/**
 * `final/compiler.json`: how the ceremony's Solidity verifiers are to be compiled, recorded by
 * `ceremony finalise` beside the `Verifier*.sol` it writes and published with them, so anyone can
 * recompile a verifier and compare it with the deployed code (`ceremony verify-deployment
 * --ceremony`). It names the compiler release (solc, the one this project ships) and the Standard
 * JSON settings, and for each verifier its source file and contract. The settings are the
 * project's (VERIFIER_COMPILER_SETTINGS); a deployer who compiles otherwise deploys code the
 * check cannot reproduce.
 *
 * Format `verifier-compiler` version 1; a change that is not an addition bumps the version.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { CoordinatorError } from '../errors.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { bundledSolcVersion } from '../deployment/bundled-solc.ts';

export const VERIFIER_COMPILER_RECORD_FILE = 'compiler.json';

/**
 * The optimizer as a deployment runs it; `paris`, the last EVM version before PUSH0, because the
 * verifier needs nothing later (only the pairing precompiles) and every EVM network runs it.
 */
const VERIFIER_COMPILER_SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'paris',
} as const;

const recordSchema = z.object({
  format: z.literal('verifier-compiler'),
  version: z.literal(1),
  compiler: z.object({ name: z.literal('solc'), version: z.string().regex(/^\d+\.\d+\.\d+$/) }).passthrough(),
  /** Solidity Standard JSON `settings` (outputSelection aside). */
  settings: z.record(z.unknown()),
  /** Verifier name → its source file in `final/` and the contract to take from it. */
  verifiers: z.record(z.object({ source: z.string().regex(/^[A-Za-z0-9_]+\.sol$/), contract: z.string() }).strict()),
});

export type VerifierCompilerRecord = z.infer<typeof recordSchema>;

/** The record of `verifiers` (each compiled from `final/<verifier>.sol`), as finalise writes it. */
function verifierCompilerRecordText(verifiers: readonly string[]): string {
  const record: VerifierCompilerRecord = {
    format: 'verifier-compiler',
    version: 1,
    compiler: { name: 'solc', version: bundledSolcVersion() },
    settings: VERIFIER_COMPILER_SETTINGS,
    verifiers: Object.fromEntries(
      verifiers.map((verifier) => [verifier, { source: `${verifier}.sol`, contract: verifier }]),
    ),
  };
  return `${JSON.stringify(record, null, 2)}\n`;
}

/** Writes the record of `verifiers` to `finalDir` (temporary file, flush, rename). */
export async function writeVerifierCompilerRecord(finalDir: string, verifiers: readonly string[]): Promise<void> {
  await writeFileAtomic(path.join(finalDir, VERIFIER_COMPILER_RECORD_FILE), verifierCompilerRecordText(verifiers));
}

/** The record in `finalDir`, undefined when there is none; `input.invalid` when it is not one. */
export async function readVerifierCompilerRecord(finalDir: string): Promise<VerifierCompilerRecord | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(finalDir, VERIFIER_COMPILER_RECORD_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CoordinatorError('input.not_json', `final/${VERIFIER_COMPILER_RECORD_FILE} is not valid JSON`);
  }
  const parsed = recordSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new CoordinatorError(
      'input.invalid',
      `final/${VERIFIER_COMPILER_RECORD_FILE} is not a verifier-compiler record (version 1): ` +
        `${issue.path.join('.') || 'the record'} ${issue.message}`,
    );
  }
  return parsed.data;
}
