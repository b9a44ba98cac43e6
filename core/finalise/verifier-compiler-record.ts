/**
 * `final/compiler.json`: how the ceremony's Solidity verifiers are to be compiled, recorded by
 * `ceremony finalise` beside the `Verifier*.sol` it writes and published with them, so anyone can
 * recompile a verifier and compare it with the deployed code (`ceremony verify-deployment
 * --ceremony`, `verify-receipt --deployment`). The record is the coordinator's file: its hash is
 * committed in the transcript's `finalised` entry, and its settings are bounded to a documented set
 * (VerifierCompilerSettings: the solc release this project ships, the optimizer and its runs, an EVM
 * version of EVM_VERSIONS). Any other field or value is refused (`compiler.record_invalid`), so no
 * setting the checks cannot reason about (remappings, libraries, viaIR, a model checker, …) can
 * reach the compiler.
 *
 * Format `verifier-compiler` version 1; a change that is not an addition bumps the version.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { CoordinatorError } from '../errors.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { bundledSolcVersion } from '../deployment/bundled-solc.ts';

export const VERIFIER_COMPILER_RECORD_FILE = 'compiler.json';

/**
 * The EVM versions a verifier may be compiled for: from byzantium, which brought the pairing
 * precompiles and STATICCALL the verifier uses, to the latest the bundled solc targets by default.
 */
const EVM_VERSIONS = [
  'byzantium',
  'constantinople',
  'petersburg',
  'istanbul',
  'berlin',
  'london',
  'paris',
  'shanghai',
  'cancun',
  'prague',
] as const;

/** A record or an auditor's settings larger than this is no compiler record (it is a few hundred bytes). */
export const MAX_COMPILER_RECORD_BYTES = 64 * 1024;

/** The Standard JSON settings a verifier may be compiled with: exactly these fields. */
const compilerSettingsSchema = z
  .object({
    optimizer: z
      .object({
        enabled: z.boolean(),
        runs: z
          .number()
          .int()
          .min(1)
          .max(2 ** 32 - 1),
      })
      .strict(),
    evmVersion: z.enum(EVM_VERSIONS),
  })
  .strict();

export type VerifierCompilerSettings = z.infer<typeof compilerSettingsSchema>;

/**
 * The optimizer as a deployment runs it; `paris`, the last EVM version before PUSH0, because the
 * verifier needs nothing later (only the pairing precompiles) and every EVM network runs it.
 * Existing deployments were compiled with these: changing them changes no deployed code, but the
 * record of a new ceremony, so keep them.
 */
const VERIFIER_COMPILER_SETTINGS: VerifierCompilerSettings = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'paris',
};

/** A solc release this project ships (the one bundled), as `x.y.z`. */
const releaseSchema = z
  .string()
  .regex(/^\d+\.\d+\.\d+$/)
  .refine((version) => version === bundledSolcVersion(), {
    message: `must be the solc release this project ships (${bundledSolcVersion()})`,
  });

const recordSchema = z
  .object({
    format: z.literal('verifier-compiler'),
    version: z.literal(1),
    compiler: z.object({ name: z.literal('solc'), version: releaseSchema }).strict(),
    settings: compilerSettingsSchema,
    /** Verifier name → its source file in `final/` and the contract to take from it. */
    verifiers: z.record(
      z.string().regex(/^Verifier[A-Za-z0-9_]+$/),
      z
        .object({ source: z.string().regex(/^[A-Za-z0-9_]+\.sol$/), contract: z.string().regex(/^[A-Za-z0-9_]+$/) })
        .strict(),
    ),
  })
  .strict();

export type VerifierCompilerRecord = z.infer<typeof recordSchema>;

/** How a compiler and its settings read in verdicts: `solc 0.8.37 {"optimizer":…,"evmVersion":"paris"}`. */
export function describeCompiler(version: string, settings: VerifierCompilerSettings): string {
  return `solc ${version} ${JSON.stringify(settings)}`;
}

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

/** Writes the record of `verifiers` to `finalDir` (temporary file, flush, rename); returns its bytes. */
export async function writeVerifierCompilerRecord(finalDir: string, verifiers: readonly string[]): Promise<Buffer> {
  const text = verifierCompilerRecordText(verifiers);
  await writeFileAtomic(path.join(finalDir, VERIFIER_COMPILER_RECORD_FILE), text);
  return Buffer.from(text, 'utf8');
}

/** The first problem zod found, as one bounded line. */
function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0]!;
  const where = issue.path.join('.') || 'the record';
  const message = issue.code === 'unrecognized_keys' ? `has a field outside the documented set` : issue.message;
  return `${where.slice(0, 80)} ${message.slice(0, 160)}`;
}

/**
 * Parses a record's text (`what` names it in messages). `compiler.record_invalid` for anything but
 * a record within the documented set, a release other than the bundled one included.
 */
export function parseVerifierCompilerRecord(text: string, what = `final/${VERIFIER_COMPILER_RECORD_FILE}`) {
  const invalid = (why: string) =>
    new CoordinatorError('compiler.record_invalid', `${what} is not a verifier-compiler record (version 1): ${why}`);
  if (Buffer.byteLength(text) > MAX_COMPILER_RECORD_BYTES) throw invalid('it is far larger than any record');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid('it is not valid JSON');
  }
  const parsed = recordSchema.safeParse(value);
  if (!parsed.success) throw invalid(firstIssue(parsed.error));
  return parsed.data;
}

/**
 * An auditor's own settings (`--compiler-settings`, for contracts compiled elsewhere): JSON
 * `{"version":"0.8.37","optimizer":{"enabled":true,"runs":200},"evmVersion":"paris"}`, held to the
 * same bounds as a record. `usage.invalid_arguments` otherwise.
 */
export function parseAuditorCompilerSettings(text: string): { version: string; settings: VerifierCompilerSettings } {
  const refuse = (why: string) =>
    new CoordinatorError(
      'usage.invalid_arguments',
      `--compiler-settings must be JSON like {"version":"${bundledSolcVersion()}","optimizer":{"enabled":true,` +
        `"runs":200},"evmVersion":"paris"} (EVM versions: ${EVM_VERSIONS.join(', ')}): ${why}`,
    );
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw refuse('it is not valid JSON');
  }
  const parsed = z.object({ version: releaseSchema }).merge(compilerSettingsSchema).strict().safeParse(value);
  if (!parsed.success) throw refuse(firstIssue(parsed.error));
  const { version, ...settings } = parsed.data;
  return { version, settings };
}

/**
 * The record's bytes in `finalDir`, undefined when there is none (bounded: a larger file is read no
 * further than the bound, and refused by the parse).
 */
export async function readVerifierCompilerRecordBytes(finalDir: string): Promise<Buffer | undefined> {
  const file = path.join(finalDir, VERIFIER_COMPILER_RECORD_FILE);
  const info = await stat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (info === undefined) return undefined;
  if (!info.isFile() || info.size > MAX_COMPILER_RECORD_BYTES) {
    throw new CoordinatorError(
      'compiler.record_invalid',
      `final/${VERIFIER_COMPILER_RECORD_FILE} is not a verifier-compiler record: ` +
        (info.isFile() ? `${info.size} bytes, far larger than any record` : 'not a file'),
    );
  }
  return readFile(file);
}
