/**
 * A verified ptau, remembered on the auditor's machine: once checkPtauSections passed for a ptau,
 * `DIR/<BLAKE2b-512>-v<check version>.json` says so, and a later audit of a ceremony on the same
 * ptau skips that check (a third of an audit's time at 2^22, docs/audit.md#cost). What makes it safe to trust:
 *   - it is keyed by the ptau's BLAKE2b-512 and the check's version (PTAU_SECTIONS_CHECK_VERSION):
 *     another file, or a check that has changed since, never matches; the file's name and its
 *     content must both say so;
 *   - the hash it is looked up by is the one the audit computed from the file's bytes for its pin
 *     (pin-ptau.ts), in the same run: never a hash read from the publication or anywhere else;
 *   - it names the domain powers checked: an audit whose circuits need another checks the ptau;
 *   - it is written to a temporary file, flushed and renamed (writeFileAtomic), mode 0600 in a
 *     folder of mode 0700; a memo that is unreadable, too large, or says anything else is no memo,
 *     and the check runs.
 * It trusts the auditor's own machine, as the audit's code does (whoever can write the auditor's
 * cache can change their checkout). `ceremony audit --recheck-ptau` ignores it and writes it anew.
 */
import path from 'node:path';
import { z } from 'zod';
import { PTAU_SECTIONS_CHECK_VERSION } from './check-ptau-sections.ts';
import { defaultVerifiedFactsDir, readVerifiedFact, rememberVerifiedFact } from './verified-facts.ts';

/** What a memo says: this machine checked the sections of this ptau for these domains. */
export interface PtauMemo {
  blake2b512: string;
  /** The version of checkPtauSections that checked it. */
  checkVersion: number;
  /** The ptau's power. */
  power: number;
  /** The circuits' domain powers the check covered (each checks its level and H's). */
  domains: number[];
  /** What was checked, in the audit's words (its report lists them). */
  checked: string[];
  /** When (ISO 8601). */
  checkedAt: string;
}

const MEMO_FORMAT = 'ceremony-verified-ptau';

const memoSchema = z
  .object({
    format: z.literal(MEMO_FORMAT),
    blake2b512: z.string().regex(/^[0-9a-f]{128}$/),
    checkVersion: z.number().int().positive(),
    power: z.number().int().min(1).max(28),
    domains: z.array(z.number().int().min(1).max(28)).min(1).max(28),
    checked: z.array(z.string().max(300)).max(100),
    checkedAt: z.string().datetime(),
  })
  .strict();

/** Where memos are kept: `$XDG_CACHE_HOME/ceremony/verified-ptau`, else `~/.cache/ceremony/verified-ptau`. */
export function defaultPtauMemoDir(env: NodeJS.ProcessEnv = process.env): string {
  return defaultVerifiedFactsDir('verified-ptau', env);
}

function memoPath(dir: string, blake2b512: string): string {
  return path.join(dir, `${blake2b512}-v${PTAU_SECTIONS_CHECK_VERSION}.json`);
}

/**
 * The memo of the ptau whose bytes hash to `blake2b512`, checked by this version of the check, or
 * undefined: none, unreadable, malformed, or about another file or version (never an error: the
 * audit then checks the ptau).
 */
export async function readPtauMemo(dir: string, blake2b512: string): Promise<PtauMemo | undefined> {
  const parsed = await readVerifiedFact(memoPath(dir, blake2b512), memoSchema);
  if (!parsed) return undefined;
  const { format: _format, ...memo } = parsed;
  if (memo.blake2b512 !== blake2b512 || memo.checkVersion !== PTAU_SECTIONS_CHECK_VERSION) return undefined;
  return memo;
}

/** True when the memo covers every one of `domains`. */
export function memoCovers(memo: PtauMemo, domains: readonly number[]): boolean {
  return domains.every((k) => memo.domains.includes(k));
}

/**
 * Remembers that the check passed: `earlier` (a memo of the same file and version, whose domains
 * were checked too) is merged in. Written atomically; rejects when the folder cannot be written
 * (the caller says so and goes on: a memo only saves time).
 */
export async function rememberVerifiedPtau(
  dir: string,
  checked: Omit<PtauMemo, 'checkVersion' | 'checkedAt'>,
  earlier?: PtauMemo,
): Promise<void> {
  const union = <T>(a: readonly T[], b: readonly T[] = []): T[] => [...new Set([...b, ...a])];
  const memo = {
    format: MEMO_FORMAT,
    blake2b512: checked.blake2b512,
    checkVersion: PTAU_SECTIONS_CHECK_VERSION,
    power: checked.power,
    domains: union(checked.domains, earlier?.domains).sort((a, b) => a - b),
    checked: union(checked.checked, earlier?.checked),
    checkedAt: new Date().toISOString(),
  };
  await rememberVerifiedFact(memoPath(dir, checked.blake2b512), memo);
}
