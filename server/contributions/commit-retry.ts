/**
 * The ceremony service's commit of a verified contribution, tried again after a while when it fails
 * for a reason that says nothing about the contribution: which failures those are, and the waits.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isCoordinatorError, refusesContribution, type CoordinatorError } from '../../core/errors.ts';

/** Waits `ms`; false if `run` is aborted (the service stopped) meanwhile. */
export function wait(ms: number, run: AbortSignal): Promise<boolean> {
  return sleep(ms, true, { signal: run }).catch(() => false);
}

/** The verdict on a candidate whose upload this coordinator does not have (any more). */
export const LOST_IN_RESTART = {
  event: 'unverifiable',
  code: 'verification.unavailable',
  message: 'the uploaded file was lost in a coordinator restart; please contribute again',
} as const;

export const DEFAULT_COMMIT_RETRY_DELAYS_MS = Array.from({ length: 32 }, (_, i) => Math.min(1000 * 2 ** i, 30_000));

/**
 * Commit refusals that mean the verified link no longer fits the chain (its head moved, the file
 * is not the one verified, the circuit was finalised) or the file itself is refused: trying again
 * changes nothing. Anything else (the data folder locked, the transcript unreadable, an I/O error)
 * says nothing about the contribution.
 */
export function linkNoLongerFits(error: unknown): error is CoordinatorError {
  if (!isCoordinatorError(error)) return false;
  return (
    refusesContribution(error.code) ||
    error.code === 'chain.file_hash_mismatch' ||
    error.code === 'ceremony.finalised' ||
    error.code === 'ceremony.beacon_announced' ||
    error.code === 'circuit.unknown'
  );
}

/**
 * Whether the candidate is still in the uploads folder (a commit that failed after moving it has
 * lost it): a commit is tried again only then.
 */
export function candidateIntact(candidatePath: string): Promise<boolean> {
  return stat(candidatePath).then(
    (stats) => stats.isFile(),
    () => false,
  );
}

/**
 * Whether a candidate's recorded path is in the uploads of the data folder `dataDir`. A database
 * restored into another folder (a backup, docs/operations.md) names the files of the folder it was
 * copied from: a coordinator verifying one of those would move another folder's upload into its own chain.
 */
export function inOwnUploads(dataDir: string, candidatePath: string): boolean {
  const uploads = path.join(path.resolve(dataDir), 'uploads') + path.sep;
  return path.resolve(candidatePath).startsWith(uploads);
}
