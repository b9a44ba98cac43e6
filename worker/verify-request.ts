/**
 * One verification request, as every verifier runs it (the embedded verifier process and the BullMQ
 * worker processes): the core's incremental verifyLink of the candidate on the verified head (no
 * r1cs, no ptau, cost flat in chain length; the final key is still checked from contribution 0
 * at finalisation), and the sorting of its failures into the two kinds that matter to a queue.
 * A refusal of the contribution (a code that core/errors.ts marks `refusesContribution`) is an
 * answer and must never be retried; anything else (a missing file, a disk error) says nothing about
 * the contribution and may be retried.
 *
 * Only verification-job.ts is shared with the server (the request and outcome shapes, isRefusalCode).
 */
import path from 'node:path';
import { z } from 'zod';
import { isCoordinatorError } from '../core/errors.ts';
import { verifyLink, type LinkVerdict } from '../core/verify/verify-link.ts';
import { circuitChallengeKey, linkChallengeSeed } from '../core/verify/link-challenge.ts';
import { readCachedCombination, writeCachedCombination, type LinkCombination } from '../core/verify/link-combination-cache.ts';
import { isRefusalCode, type VerificationOutcome, type VerificationRequest } from '../server/verification/verification-job.ts';

/** The outcomes a verification can decide; 'error' is for the queue to give after its retries. */
export type DecidedOutcome = Extract<VerificationOutcome, { status: 'valid' | 'invalid' }>;

// Workers on several machines read the same data folder through the same mount point, so a
// relative path (resolved against each worker's own cwd) would silently mean different files.
const absolutePath = z.string().min(1).refine((p) => path.isAbsolute(p), { message: 'must be an absolute path' });

const verificationRequestSchema = z.object({
  contributionId: z.string().min(1),
  circuit: z.string().min(1),
  headIndex: z.number().int().nonnegative(),
  initZkeyPath: absolutePath,
  headZkeyPath: absolutePath,
  ptauPath: absolutePath,
  candidatePath: absolutePath,
  challenge: z
    .object({
      stateDir: absolutePath,
      headFileHash: z.string().regex(/^[0-9a-f]{32,128}$/),
      candidateFileHash: z.string().regex(/^[0-9a-f]{32,128}$/),
    })
    .optional(),
});

// Refusals reach the contributor: files are named by role, never by the coordinator's paths.
const LINK_LABELS = { prev: 'the chain head', next: 'the uploaded key' };

/** Checks data that crossed a process boundary (a job from Redis, a thread message). */
export function parseVerificationRequest(data: unknown): VerificationRequest {
  const parsed = verificationRequestSchema.safeParse(data);
  if (!parsed.success) {
    throw new TypeError(`malformed verification request: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}

async function verifyWithChallenge(request: VerificationRequest): Promise<LinkVerdict> {
  const { challenge } = request;
  if (!challenge) return verifyLink(request.headZkeyPath, request.candidatePath, { labels: LINK_LABELS });
  const key = circuitChallengeKey(await linkChallengeSeed(challenge.stateDir), request.circuit);
  const head = await readCachedCombination(challenge.stateDir, key, challenge.headFileHash);
  const link = await verifyLink(request.headZkeyPath, request.candidatePath, { labels: LINK_LABELS, challenge: head ? { key, head } : { key } });
  // Cached before the verdict leaves, since the next verification on this circuit has this
  // candidate as head; the head's too when it had to be computed (after a restart, or for
  // contribution 0). A cache that cannot be written only costs a later verification its second MSM.
  const entries: Array<[string, LinkCombination]> = [[challenge.candidateFileHash, link.combination]];
  if (link.headCombination) entries.push([challenge.headFileHash, link.headCombination]);
  for (const [fileHash, combination] of entries) {
    await writeCachedCombination(challenge.stateDir, key, fileHash, combination).catch((error: NodeJS.ErrnoException) => {
      process.stderr.write(`verifier: could not cache a link combination (${error.code ?? error.name})\n`);
    });
  }
  return link;
}

/**
 * Verifies the candidate of `request` against its head. Resolves with 'valid' or 'invalid';
 * rejects (with the original error) when the verification could not be carried out, which a
 * queue should retry.
 */
export async function verifyRequest(request: VerificationRequest): Promise<DecidedOutcome> {
  const { contributionId } = request;
  try {
    const link = await verifyWithChallenge(request);
    return link.recordedName === undefined
      ? { contributionId, status: 'valid', contributionHash: link.contributionHash }
      : { contributionId, status: 'valid', contributionHash: link.contributionHash, recordedName: link.recordedName };
  } catch (error) {
    if (isCoordinatorError(error) && isRefusalCode(error.code)) {
      return { contributionId, status: 'invalid', code: error.code, message: error.message };
    }
    throw error;
  }
}
