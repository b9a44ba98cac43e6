/**
 * A contribution 0 checked against its r1cs and ptau (checkInitialKey), remembered on the
 * auditor's machine (verified-facts.ts), so that a later audit of the same three files skips that
 * check, the largest part of an audit after the ptau's (docs/audit.md#cost). What makes it safe:
 *   - it is keyed by the BLAKE2b-512 of the r1cs, of the ptau and of contribution 0, each the hash
 *     the audit computed from the file's bytes in the same run (the r1cs and the ptau then held to
 *     the auditor's pins, contribution 0 to its transcript entry), and by the check's version
 *     (INITIAL_KEY_CHECK_VERSION): the file's name is a hash of all four, and its content must
 *     name each of them;
 *   - it is written only once the check passed, atomically; a record that says anything else is no
 *     record, and the check runs.
 * `ceremony audit --recheck` ignores it and writes it anew.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { INITIAL_KEY_CHECK_VERSION } from './check-initial-key.ts';
import { defaultVerifiedFactsDir, readVerifiedFact, rememberVerifiedFact } from './verified-facts.ts';

/** The three files a contribution-0 check is about, by the hashes this audit computed from their bytes. */
export interface InitialKeyFiles {
  r1csHash: string;
  ptauHash: string;
  keyHash: string;
}

/** What a record says: this machine checked this contribution 0 against this r1cs and ptau. */
export interface InitialKeyMemo extends InitialKeyFiles {
  checkVersion: number;
  /** The circuit hash the check returned (the audit compares it with the transcript's every time). */
  circuitHash: string;
  /** When (ISO 8601). */
  checkedAt: string;
}

const MEMO_FORMAT = 'ceremony-verified-initial-key';
const hash512 = z.string().regex(/^[0-9a-f]{128}$/);

const memoSchema = z
  .object({
    format: z.literal(MEMO_FORMAT),
    r1csHash: hash512,
    ptauHash: hash512,
    keyHash: hash512,
    checkVersion: z.number().int().positive(),
    circuitHash: hash512,
    checkedAt: z.string().datetime(),
  })
  .strict();

/** `$XDG_CACHE_HOME/ceremony/verified-initial-key`, else `~/.cache/ceremony/verified-initial-key`. */
export function defaultInitialKeyMemoDir(env: NodeJS.ProcessEnv = process.env): string {
  return defaultVerifiedFactsDir('verified-initial-key', env);
}

function memoPath(dir: string, files: InitialKeyFiles): string {
  const key = createHash('blake2b512').update(`${files.r1csHash}\n${files.ptauHash}\n${files.keyHash}\n`).digest('hex');
  return path.join(dir, `${key}-v${INITIAL_KEY_CHECK_VERSION}.json`);
}

/**
 * The record of these three files checked by this version of the check, or undefined: none,
 * unreadable, malformed, or about other files or another version (the audit then checks).
 */
export async function readInitialKeyMemo(dir: string, files: InitialKeyFiles): Promise<InitialKeyMemo | undefined> {
  const parsed = await readVerifiedFact(memoPath(dir, files), memoSchema);
  if (!parsed) return undefined;
  const { format: _format, ...memo } = parsed;
  const same =
    memo.r1csHash === files.r1csHash &&
    memo.ptauHash === files.ptauHash &&
    memo.keyHash === files.keyHash &&
    memo.checkVersion === INITIAL_KEY_CHECK_VERSION;
  return same ? memo : undefined;
}

/** Remembers that the check of these files passed; rejects when the folder cannot be written. */
export async function rememberVerifiedInitialKey(
  dir: string,
  files: InitialKeyFiles,
  circuitHash: string,
): Promise<void> {
  await rememberVerifiedFact(memoPath(dir, files), {
    format: MEMO_FORMAT,
    r1csHash: files.r1csHash,
    ptauHash: files.ptauHash,
    keyHash: files.keyHash,
    checkVersion: INITIAL_KEY_CHECK_VERSION,
    circuitHash,
    checkedAt: new Date().toISOString(),
  });
}
