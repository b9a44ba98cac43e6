/**
 * What the parts of one chain's audit share (audit-chain.ts, audit-from-initial.ts,
 * audit-every-link.ts): the chain and where its report goes, and the two ways a key file is held to
 * its transcript entry: its whole-file hash and every section's, computed from its bytes; or, for a
 * key between in the default audit, every section's and contribution 0's layout (one pass, not two);
 * with the read failures named apart from a mismatch.
 */
import path from 'node:path';
import type { CeremonyPaths } from '../data-folder/ceremony-paths.ts';
import type { CircuitChain } from '../ceremony/open-ceremony.ts';
import type { Progress } from '../ceremony/progress.ts';
import type { StageTimer } from '../runtime/stage-timings.ts';
import type { SectionHashes } from '../zkey/zkey-hashes.ts';
import { CoordinatorError } from '../errors.ts';
import { SectionTableError } from '../binfile/section-table.ts';
import { hashKeyOnTwoThreads } from './audit-key-hashes.ts';
import { readKeyLayout, type KeyLayout, type SectionHasher } from './key-section-hashes.ts';
import type { AuditedCircuit } from './audit-report-parts.ts';

/** What the parts of one chain's audit share. */
export interface ChainAudit {
  name: string;
  chain: CircuitChain;
  audited: AuditedCircuit;
  paths: CeremonyPaths;
  progress: Progress;
  timer: StageTimer;
}

/** A key this audit checked: its path, and its section hashes as its bytes gave them. */
export interface CheckedKey {
  path: string;
  hashes: SectionHashes | undefined;
}

/**
 * "Missing" sends the auditor looking for a lost file; a file that is there but cannot be read (a
 * directory in its place, permissions, an I/O error) needs another fix, so the code says which.
 */
export function readFailure(error: unknown, what: string): CoordinatorError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new CoordinatorError('chain.file_missing', `${what} is missing`);
  return new CoordinatorError('chain.file_unreadable', `${what} cannot be read (${code ?? (error as Error).message})`);
}

/**
 * The key file against its transcript entry: the whole file's hash and, for a format-2 entry, each
 * section's, on two threads (audit-key-hashes.ts). Returns the section hashes its bytes gave.
 */
export async function expectKeyHashes(
  filePath: string,
  entry: { fileHash: string; sectionHashes?: Record<string, string> },
  what: string,
): Promise<SectionHashes | undefined> {
  const named = `${what} (${path.basename(filePath)})`;
  let actual;
  try {
    actual = await hashKeyOnTwoThreads(filePath);
  } catch (error) {
    throw readFailure(error, named);
  }
  if (actual.fileHash !== entry.fileHash) {
    throw new CoordinatorError('chain.file_hash_mismatch', `${named} is not the file the transcript records`);
  }
  if (!entry.sectionHashes) return actual.sectionHashes;
  for (const [id, hash] of Object.entries(entry.sectionHashes)) {
    if (actual.sectionHashes?.[id] !== hash) {
      throw new CoordinatorError(
        'transcript.section_hash_mismatch',
        `${named}: the transcript's hash of its section ${id} is not the hash of that section of the file ` +
          'the transcript names (its whole-file hash matches): the entry commits to other bytes than the key has',
      );
    }
  }
  return actual.sectionHashes;
}

/**
 * A key between against its format-2 transcript entry, by its sections (key-section-hashes.ts says
 * why that fixes every byte): when its layout is `expected` (a contribution's: magic, version, the
 * sections in that order, nothing after the last), the entry names exactly its sections, and each
 * hashes to the entry's, it is the file those hashes commit to, read once. Anything else is judged
 * as expectKeyHashes judges it, its whole file hashed too (only a failing or unusual key pays for
 * that), so the codes are the link-by-link audit's: `chain.file_hash_mismatch` for a file that is
 * not the one the transcript records, `transcript.section_hash_mismatch` for an entry whose section
 * hashes are not its own file's. The entry's whole-file hash is not computed on the first way: the
 * verdict says so. Returns the section hashes.
 */
export async function expectSectionHashes(
  filePath: string,
  entry: { fileHash: string; sectionHashes: Record<string, string> },
  what: string,
  expected: Pick<KeyLayout, 'version' | 'order'>,
  hasher: SectionHasher,
): Promise<SectionHashes | undefined> {
  let layout: KeyLayout;
  try {
    layout = await readKeyLayout(filePath, expected.order.length);
  } catch (error) {
    if (error instanceof SectionTableError) return expectKeyHashes(filePath, entry, what);
    throw readFailure(error, `${what} (${path.basename(filePath)})`);
  }
  const entryIds = Object.keys(entry.sectionHashes).sort().join();
  const laidOut =
    layout.version === expected.version &&
    layout.order.join() === expected.order.join() &&
    entryIds === layout.order.map(String).sort().join();
  if (!laidOut) return expectKeyHashes(filePath, entry, what);
  let actual: SectionHashes;
  try {
    actual = await hasher.hash(filePath, layout);
  } catch (error) {
    throw readFailure(error, `${what} (${path.basename(filePath)})`);
  }
  const same = layout.order.every((id) => actual[String(id)] === entry.sectionHashes[String(id)]);
  return same ? actual : expectKeyHashes(filePath, entry, what);
}

/** `count` of `noun`, plural unless one: "1 contribution", "3 keys". */
export function counted(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
