/**
 * The options of the commands that judge deployed verifier code (`verify-deployment --ceremony`,
 * `verify-receipt --deployment`): `--compiler-settings`, the auditor's own compiler settings for
 * contracts compiled elsewhere, and `--constants-only`, the weaker check that never says `match`.
 */
import { readFile } from 'node:fs/promises';
import { Option } from 'commander';
import { CoordinatorError } from '../../core/errors.ts';
import {
  MAX_COMPILER_RECORD_BYTES,
  parseAuditorCompilerSettings,
  type VerifierCompilerSettings,
} from '../../core/finalise/verifier-compiler-record.ts';

export function compilerSettingsOption(): Option {
  return new Option(
    '--compiler-settings <json-or-file>',
    'judge the code against the verifier compiled with these settings instead of the ceremony’s committed ' +
      'final/compiler.json (for contracts compiled elsewhere): JSON, or a file holding it, with the fields ' +
      '"version" (the solc release this project ships), "optimizer" ({ "enabled", "runs" }) and "evmVersion"',
  );
}

export function constantsOnlyOption(): Option {
  return new Option(
    '--constants-only',
    'check only that every constant of the final key is in the code (verdict `constants-present`, never `match`): ' +
      'NOT that the code is the verifier',
  );
}

/** `--compiler-settings`'s value: inline JSON, or the path of a file that holds it. */
export async function readCompilerSettings(
  value: string | undefined,
): Promise<{ version: string; settings: VerifierCompilerSettings } | undefined> {
  if (value === undefined) return undefined;
  if (value.trimStart().startsWith('{')) return parseAuditorCompilerSettings(value);
  const text = await readFile(value, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new CoordinatorError(
      error.code === 'ENOENT' ? 'input.file_not_found' : 'input.invalid',
      `--compiler-settings: cannot read ${value} (${error.code ?? 'unreadable'})`,
    );
  });
  if (Buffer.byteLength(text) > MAX_COMPILER_RECORD_BYTES)
    throw new CoordinatorError('input.invalid', `--compiler-settings: ${value} is far larger than any settings`);
  return parseAuditorCompilerSettings(text);
}

/** The two options exclude each other: one asks for the full comparison, the other for less. */
export function requireOneCodeMode(flags: { constantsOnly?: boolean; compilerSettings?: string }): void {
  if (flags.constantsOnly === true && flags.compilerSettings !== undefined)
    throw new CoordinatorError(
      'usage.invalid_arguments',
      '--constants-only compiles nothing, so --compiler-settings means nothing with it: give one of them',
    );
}
