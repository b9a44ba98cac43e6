/**
 * One verification request, as every verifier runs it (the embedded verifier process and the BullMQ
 * worker processes): the core's incremental verifyLinkFromHead of the candidate on the verified head (no
 * r1cs, no ptau, cost flat in chain length; the final key is still checked from contribution 0
 * at finalisation), and the sorting of its failures into the two kinds that matter to a queue.
 * A refusal of the contribution (a code that core/errors.ts marks `refusesContribution`) is an
 * answer and must never be retried; anything else (a missing file, a disk error) says nothing about
 * the contribution and may be retried.
 *
 * What it shares with the coordinator (the request and outcome shapes, isRefusalCode) is the
 * verifier contract, core/verifier-contract/verifier-contract.ts.
 */
import { boundedText } from '../core/bounded-text.ts';
import { isCoordinatorError } from '../core/errors.ts';
import { verifyLinkFromHead, type LinkVerdict } from '../core/link-check/verify-link-from-head.ts';
import type { KnownSectionHashes } from '../core/link-check/check-link-structure.ts';
import { fileIdentity, parseFileIdentity, sameFileIdentity } from '../core/fs/file-identity.ts';
import { circuitChallengeKey, linkChallengeSeed } from '../core/link-check/link-challenge.ts';
import {
  cacheLinkCombinations,
  openCandidateSums,
  readCachedCombination,
} from '../core/link-check/link-combination-cache.ts';
import {
  isRefusalCode,
  type DecidedOutcome,
  type VerificationRequest,
} from '../core/verifier-contract/verifier-contract.ts';

// Refusals reach the contributor: files are named by role, never by the coordinator's paths.
const LINK_LABELS = { prev: 'the chain head', next: 'the uploaded key' };

/**
 * The request's section hashes, if the candidate is still the file they were taken of (same
 * identity now): the structure check then compares the fixed sections by them.
 */
async function knownSectionHashes(request: VerificationRequest): Promise<{ sectionHashes?: KnownSectionHashes }> {
  const given = request.sectionHashes;
  if (!given) return {};
  const now = await fileIdentity(request.candidatePath).catch(() => undefined);
  if (!now || !sameFileIdentity(now, parseFileIdentity(given.candidateIdentity))) return {};
  return { sectionHashes: { head: given.head, candidate: given.candidate } };
}

async function verifyWithChallenge(request: VerificationRequest): Promise<LinkVerdict> {
  const { challenge } = request;
  const known = await knownSectionHashes(request);
  if (!challenge)
    return verifyLinkFromHead(request.headZkeyPath, request.candidatePath, { labels: LINK_LABELS, ...known });
  const key = circuitChallengeKey(await linkChallengeSeed(challenge.stateDir), request.circuit);
  const head = await readCachedCombination(challenge.stateDir, key, challenge.headFileHash);
  // Made by the coordinator as the upload arrived (a contribution delta). Sums that do not open
  // (malformed, another file's or circuit's) are only work not saved: L and H are summed here.
  const next =
    challenge.candidateSums === undefined
      ? undefined
      : openCandidateSums(key, challenge.candidateFileHash, Buffer.from(challenge.candidateSums, 'base64'));
  if (challenge.candidateSums !== undefined && !next)
    process.stderr.write('verifier: the candidate’s sums do not open under this key; summing L and H\n');
  const link = await verifyLinkFromHead(request.headZkeyPath, request.candidatePath, {
    labels: LINK_LABELS,
    ...known,
    challenge: { key, ...(head ? { head } : {}), ...(next ? { next } : {}) },
  });
  // Cached before the verdict leaves, since the next verification on this circuit has this
  // candidate as head; the head's too when it had to be computed (contribution 0, or a head whose
  // entry was lost or of an earlier version). A cache that cannot be written only costs a later
  // verification its second MSM.
  await cacheLinkCombinations(
    challenge.stateDir,
    key,
    link,
    { candidate: challenge.candidateFileHash, head: challenge.headFileHash },
    (error) => process.stderr.write(`verifier: could not cache a link combination (${error.code ?? error.name})\n`),
  );
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
      // Shown to the contributor and logged: bounded, whatever the file made it quote.
      return { contributionId, status: 'invalid', code: error.code, message: boundedText(error.message) };
    }
    throw error;
  }
}
