/**
 * Facts this machine verified, remembered in its cache (the ptau's sections, verified-ptau-memo.ts;
 * contribution 0 against its r1cs and ptau, verified-initial-key-memo.ts): one small JSON record a
 * file, in a folder of its own per kind. What every kind shares: where the folder is, that a record
 * is read only when it is small, parses and matches its schema exactly (anything else is no record,
 * and the check runs), and that it is written atomically, private to the auditor. Each kind names
 * its file by the content hashes and check version it is about, and compares its content with them.
 * It trusts the auditor's own machine, as the audit's code does (whoever can write the auditor's
 * cache can change their checkout).
 */
import { homedir } from 'node:os';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { z } from 'zod';
import { writeFileAtomic } from '../fs/atomic-write.ts';

/** A record is a few kilobytes; anything larger is not one. */
const RECORD_MAX_BYTES = 64 * 1024;

/**
 * Where records of `kind` are kept: `$XDG_CACHE_HOME/ceremony/KIND` (an absolute XDG_CACHE_HOME
 * only, as its specification says), else `~/.cache/ceremony/KIND`.
 */
export function defaultVerifiedFactsDir(kind: string, env: NodeJS.ProcessEnv = process.env): string {
  const cache = env.XDG_CACHE_HOME;
  const base = cache && path.isAbsolute(cache) ? cache : path.join(homedir(), '.cache');
  return path.join(base, 'ceremony', kind);
}

/** The record at `file` as `schema` parses it, or undefined: none, unreadable, too large or malformed. */
export async function readVerifiedFact<T>(file: string, schema: z.ZodType<T>): Promise<T | undefined> {
  try {
    if ((await stat(file)).size > RECORD_MAX_BYTES) return undefined;
    const parsed = schema.safeParse(JSON.parse(await readFile(file, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes `record` to `file` atomically, mode 0600 in a folder of mode 0700; rejects when the
 * folder cannot be written (the caller says so and goes on: a record only saves time).
 */
export async function rememberVerifiedFact(file: string, record: object): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600, directoryMode: 0o700 });
}
