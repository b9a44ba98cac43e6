/**
 * The verifier contract: everything the coordinator (server/) and the verifiers (worker/) must
 * agree on, in the one place both import, since server and worker never import each other.
 *
 *  - the request a verifier runs and the outcome it gives back, and the check of a request that
 *    crossed a process boundary (a BullMQ job from Redis, an IPC message);
 *  - the rule that sorts failures: a refusal of the contribution is an answer, never retried;
 *    anything else says nothing about the contribution and may be retried;
 *  - the BullMQ queue's default name and job name;
 *  - the IPC messages of the embedded verifier process, and where its entry file is, so the
 *    coordinator can fork it without loading worker code.
 *
 * The request carries only what a verifier reads: the incremental link check needs the head and
 * the candidate (no contribution 0, no ptau; the final keys are checked from contribution 0 at
 * finalisation).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { isErrorCode, refusesContribution, type ErrorCode } from '../errors.ts';
import { MAX_HASHED_SECTIONS, type SectionHashes } from '../zkey/zkey-hashes.ts';
import type { SerialisedFileIdentity } from '../fs/file-identity.ts';
import { MAX_SEALED_SUMS_BYTES } from '../link-check/link-combination-cache.ts';

/** Queue the coordinator and `ceremony worker` use unless told otherwise (VERIFICATION_QUEUE). */
export const DEFAULT_VERIFICATION_QUEUE = 'ceremony-verification';

/** Name of every job the coordinator puts on the queue; a worker refuses any other. */
export const VERIFICATION_JOB_NAME = 'verify';

/**
 * True for the error codes that refuse a contribution (core/errors.ts: refusesContribution), as
 * opposed to a problem of the verifier: a refusal is an answer and is never retried. Takes any
 * string, as read back from a queue: an unknown code is no refusal.
 */
export function isRefusalCode(code: string): code is ErrorCode {
  return isErrorCode(code) && refusesContribution(code);
}

export interface VerificationRequest {
  /** The contribution row this verifies (also the BullMQ job id, so a job is never queued twice). */
  contributionId: string;
  circuit: string;
  /** Index of the head the candidate must extend. */
  headIndex: number;
  headZkeyPath: string;
  candidatePath: string;
  /**
   * Lets the verifier use the coordinator's secret challenge and its cache of combinations (one
   * MSM per link instead of two; see core/link-check/link-challenge.ts). The coordinator always sends
   * it; without it the verifier draws fresh scalars. Hashes are the transcript's file hashes.
   * `candidateSums` (base64) are the candidate's sums under the same key, made by the coordinator as
   * the upload arrived and sealed for its file hash (sealCandidateSums): the verifier adds them
   * instead of reading and summing L and H. Carried here, not left in the state folder, so that a
   * verifier elsewhere, or one re-sent the request after a restart, has them as well.
   */
  challenge?: { stateDir: string; headFileHash: string; candidateFileHash: string; candidateSums?: string };
  /**
   * The section hashes of the head (its transcript entry's) and of the candidate (taken by the
   * coordinator when the upload ended, or as it spliced it), with the candidate file's identity
   * when they were taken. The verifier compares the fixed sections by these hashes if the file's
   * identity is still the same, and byte for byte otherwise.
   */
  sectionHashes?: { head: SectionHashes; candidate: SectionHashes; candidateIdentity: SerialisedFileIdentity };
}

export type VerificationOutcome =
  | { contributionId: string; status: 'valid'; contributionHash: string; recordedName?: string }
  | { contributionId: string; status: 'invalid'; code: ErrorCode; message: string }
  /** The verifier could not decide (I/O, crash) after its retries; the contribution may be retried. */
  | { contributionId: string; status: 'error'; message: string };

/** The outcomes a verification can decide; 'error' is for the queue to give after its retries. */
export type DecidedOutcome = Extract<VerificationOutcome, { status: 'valid' | 'invalid' }>;

// Workers on several machines read the same data folder through the same mount point, so a
// relative path (resolved against each worker's own cwd) would silently mean different files.
const absolutePath = z
  .string()
  .min(1)
  .refine((p) => path.isAbsolute(p), { message: 'must be an absolute path' });
const fileHash = z.string().regex(/^[0-9a-f]{32,128}$/);
// A zkey has a dozen sections; ids are small integers.
const sectionHashes = z
  .record(z.string().regex(/^\d{1,3}$/), z.string().regex(/^[0-9a-f]{128}$/))
  .refine((hashes) => Object.keys(hashes).length <= MAX_HASHED_SECTIONS, { message: 'too many sections' });
const decimal = z.string().regex(/^\d{1,40}$/);
// Bounded before a byte is decoded; what is inside is checked where it is opened (openCandidateSums).
const sealedSums = z
  .string()
  .max(4 * Math.ceil(MAX_SEALED_SUMS_BYTES / 3))
  .regex(/^[A-Za-z0-9+/]*={0,2}$/);

// Not strict: a job queued by a coordinator of an earlier version (with fields since dropped)
// is still verified after an upgrade.
const verificationRequestSchema = z.object({
  contributionId: z.string().min(1),
  circuit: z.string().min(1),
  headIndex: z.number().int().nonnegative(),
  headZkeyPath: absolutePath,
  candidatePath: absolutePath,
  challenge: z
    .object({
      stateDir: absolutePath,
      headFileHash: fileHash,
      candidateFileHash: fileHash,
      candidateSums: sealedSums.optional(),
    })
    .optional(),
  sectionHashes: z
    .object({
      head: sectionHashes,
      candidate: sectionHashes,
      candidateIdentity: z.object({ dev: decimal, ino: decimal, size: decimal, mtimeNs: decimal }),
    })
    .optional(),
});

/** Issues named in the error of a request that does not parse: enough to see what is wrong, and bounded. */
const NAMED_ISSUES = 5;
/** Characters of each issue's path and message kept in that error. */
const ISSUE_CHARACTERS = 120;

function parsed<T>(schema: z.ZodType<T>, what: string, data: unknown): T {
  const result = schema.safeParse(data);
  if (!result.success) {
    const { issues } = result.error;
    const named = issues
      .slice(0, NAMED_ISSUES)
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`.slice(0, ISSUE_CHARACTERS));
    const more = issues.length > NAMED_ISSUES ? `; and ${issues.length - NAMED_ISSUES} more` : '';
    throw new TypeError(`malformed ${what}: ${named.join('; ')}${more}`);
  }
  return result.data;
}

/** Checks data that crossed a process boundary; throws a TypeError naming every bad field. */
export function parseVerificationRequest(data: unknown): VerificationRequest {
  return parsed(verificationRequestSchema, 'verification request', data);
}

/** Name of the queue's jobs that prepare a head (HeadPreparationRequest); an older worker fails them, harmlessly. */
export const PREPARE_HEAD_JOB_NAME = 'prepare-head';

/**
 * Asks a verifier to put a head's combination in the coordinator's cache if it is not there
 * (worker/prepare-head.ts): sent for every open chain when the coordinator starts, so that the
 * first link on contribution 0 (or on a head whose entry was lost) costs one MSM at the verdict,
 * like every other, instead of two. Best effort: nothing waits for it, and a verification that
 * starts first computes the head's combination itself, as it always could.
 */
export interface HeadPreparationRequest {
  circuit: string;
  headZkeyPath: string;
  stateDir: string;
  headFileHash: string;
}

const headPreparationSchema = z.object({
  circuit: z.string().min(1),
  headZkeyPath: absolutePath,
  stateDir: absolutePath,
  headFileHash: fileHash,
});

export function parseHeadPreparationRequest(data: unknown): HeadPreparationRequest {
  return parsed(headPreparationSchema, 'head preparation request', data);
}

/** What preparing a head did: found its entry there already, or computed and wrote it. */
export interface HeadPreparationResult {
  circuit: string;
  headFileHash: string;
  result: 'cached' | 'computed';
  ms: number;
}

/** Coordinator → embedded verifier. */
export type ToEmbeddedVerifier =
  | { type: 'verify'; request: VerificationRequest }
  | { type: 'prepare-head'; request: HeadPreparationRequest }
  | { type: 'shutdown' };

/**
 * Embedded verifier → coordinator. `failure` is a verification that could not be carried out
 * (retryable); a head preparation that fails is only reported.
 */
export type FromEmbeddedVerifier =
  | { type: 'ready' }
  | { type: 'outcome'; outcome: DecidedOutcome }
  | { type: 'failure'; contributionId: string; message: string }
  | { type: 'head-prepared'; prepared: HeadPreparationResult }
  | { type: 'head-preparation-failed'; circuit: string; message: string };

/**
 * The file the coordinator forks as its embedded verifier. Compiled (dist/), the verifier's own
 * compiled module, run with plain Node; from the sources, a plain-JavaScript entry that loads it
 * itself, whatever loader the coordinator used: compiled when dist/ is current, else through tsx.
 * Resolved from this module's own place, which is at the same depth in both trees.
 */
export const EMBEDDED_VERIFIER_ENTRY = fileURLToPath(
  new URL(
    import.meta.url.endsWith('.js') ? '../../worker/embedded-verifier.js' : '../../worker/embedded-verifier-entry.js',
    import.meta.url,
  ),
);
