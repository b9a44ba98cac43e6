/**
 * Adding a link to a circuit's chain: verify the staged candidate against the head, move it into
 * place under its index, then commit it with a transcript entry. The order is what makes it crash
 * safe: until the transcript entry is written the new file is an orphan beyond the head, which the
 * next write replaces; a refused candidate never touches the chain.
 */
import { copyFile, rename, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { contributionRecord } from '../kernel/contribute-fast.ts';
import { contributeInOnePass, verifyOnePassLink } from '../delta/one-pass-contribution.ts';
import { commitFile, makeDirectory, removeTempLeftovers, tempPathFor } from '../fs/atomic-write.ts';
import { hashKeyFile, type SectionHashes } from '../zkey/zkey-hashes.ts';
import { fileIdentity, sameFileIdentity, type FileIdentity } from '../fs/file-identity.ts';
import { CoordinatorError } from '../errors.ts';
import { verifyLinkFromInit, type VerifiedLink } from '../link-check/verify-link-from-init.ts';
import { circuitChallengeKey, linkChallengeSeed, stateDirFor } from '../link-check/link-challenge.ts';
import { cacheLinkCombinations, readCachedCombination } from '../link-check/link-combination-cache.ts';
import { withCeremonyLock } from '../data-folder/ceremony-lock.ts';
import { refuseOutsideQueueLog } from '../queue-log/queue-log-begun.ts';
import { ceremonyPaths } from '../data-folder/ceremony-paths.ts';
import {
  openCeremony,
  refuseAfterBeaconAnnouncement,
  requireChain,
  type CeremonyState,
  type CircuitChain,
} from './open-ceremony.ts';
import { pointsScaledProgress, silentProgress, type Progress } from './progress.ts';

export interface AcceptedContribution {
  circuit: string;
  index: number;
  contributor: string;
  contributionHash: string;
  fileHash: string;
  path: string;
  /** The hash of the link's transcript entry (what commits it). */
  transcriptHash: string;
}

/** Verifies a candidate against the current head of a chain, changing nothing. */
async function verifyAgainstHead(
  state: CeremonyState,
  chain: CircuitChain,
  candidatePath: string,
  progress: Progress = silentProgress,
): Promise<VerifiedLink> {
  return verifyLinkFromInit({
    initZkeyPath: state.paths.zkeyPath(chain.circuit.name, 0),
    ptauPath: state.config.ptauPath,
    headZkeyPath: state.paths.zkeyPath(chain.circuit.name, chain.headIndex),
    candidatePath,
    progress: { to: progress, circuit: chain.circuit.name },
  });
}

function refuseIfClosed(state: CeremonyState, chain: CircuitChain): void {
  if (state.finalised || chain.beacon) {
    throw new CoordinatorError(
      'ceremony.finalised',
      `circuit ${chain.circuit.name} is finalised; it takes no more contributions`,
    );
  }
  refuseAfterBeaconAnnouncement(state);
}

type LinkVerifier = (state: CeremonyState, chain: CircuitChain, candidatePath: string) => Promise<VerifiedLink>;

async function commitStagedLink(
  state: CeremonyState,
  chain: CircuitChain,
  staged: string,
  contributor: string,
  verify: LinkVerifier = verifyAgainstHead,
): Promise<AcceptedContribution> {
  const link = await verify(state, chain, staged);
  return commitLink(state, chain, staged, {
    contributor,
    contributionHash: link.contributionHash,
    ...(await hashKeyFile(staged, 'the contribution')),
  });
}

/**
 * The commit itself: the staged file becomes the next index (flushed, renamed), then the
 * transcript entry is written, which is the commit point (see the module header).
 */
async function commitLink(
  state: CeremonyState,
  chain: CircuitChain,
  staged: string,
  link: { contributor: string; contributionHash: string; fileHash: string; sectionHashes: SectionHashes },
): Promise<AcceptedContribution> {
  const index = chain.headIndex + 1;
  const target = state.paths.zkeyPath(chain.circuit.name, index);
  await commitFile(staged, target);
  const [entry] = await state.transcript.append([
    { type: 'contribution', circuit: chain.circuit.name, index, ...link },
  ]);
  const { sectionHashes: _recorded, ...accepted } = link;
  return { circuit: chain.circuit.name, index, ...accepted, path: target, transcriptHash: entry!.hash };
}

async function withChain<T>(
  dataDir: string,
  circuitName: string,
  work: (state: CeremonyState, chain: CircuitChain, stagedPath: string) => Promise<T>,
): Promise<T> {
  return withCeremonyLock(ceremonyPaths(dataDir).lockPath, async () => {
    const state = await openCeremony(dataDir);
    const chain = requireChain(state, circuitName);
    refuseIfClosed(state, chain);
    const chainDir = state.paths.chainDir(chain.circuit.name);
    await makeDirectory(chainDir);
    await removeTempLeftovers(chainDir);
    const staged = tempPathFor(state.paths.zkeyPath(chain.circuit.name, chain.headIndex + 1));
    try {
      return await work(state, chain, staged);
    } finally {
      await rm(staged, { force: true });
    }
  });
}

/**
 * Accepts a contribution made elsewhere (a file given to the CLI). The file is copied into the chain
 * folder first and the copy is what gets verified and committed, so the bytes checked are the bytes
 * kept. Refused once a coordinator's queue log has begun on the folder (refuseOutsideQueueLog).
 */
export async function acceptContribution(
  dataDir: string,
  circuitName: string,
  candidatePath: string,
  contributor: string,
): Promise<AcceptedContribution> {
  return withChain(dataDir, circuitName, async (state, chain, staged) => {
    await refuseOutsideQueueLog(state.paths.dataDir);
    await copyFile(candidatePath, staged);
    return commitStagedLink(state, chain, staged, contributor);
  });
}

/**
 * Makes one contribution on this machine: fresh entropy from the OS, held only in memory for the
 * length of the snarkjs call (never logged or written), with L and H scaled by the G1 kernel on
 * every core (core/kernel), then verified and committed like any other. Refused, before any work,
 * once a coordinator's queue log has begun on the folder: the audit would fail the link
 * (core/queue-log/queue-log-begun.ts).
 */
export async function contributeLocally(
  dataDir: string,
  circuitName: string,
  contributor: string,
  progress: Progress = silentProgress,
): Promise<AcceptedContribution> {
  return withChain(dataDir, circuitName, async (state, chain, staged) => {
    await refuseOutsideQueueLog(state.paths.dataDir);
    const name = chain.circuit.name;
    const headPath = state.paths.zkeyPath(name, chain.headIndex);
    progress({ type: 'step', circuit: name, step: `contributing to contribution ${chain.headIndex}` });
    // Under the coordinator's circuit key, with its cache, as its verifiers check a turn: the head's
    // combination from the cache, the new key's sums taken as it is written (no MSM), and the new
    // key's combination left for the next link (or finalise).
    const stateDir = stateDirFor(state.paths.dataDir);
    const key = circuitChallengeKey(await linkChallengeSeed(stateDir), name);
    const head = chain.head ? await readCachedCombination(stateDir, key, chain.head.fileHash) : undefined;
    const made = await contributeInOnePass({
      headPath,
      outPath: staged,
      makeRecord: (smallKey) => contributionRecord(smallKey, contributor, randomBytes(64).toString('hex')),
      circuitKey: key,
      onScaled: pointsScaledProgress(progress, name),
    });
    progress({ type: 'step', circuit: name, step: `verifying contribution ${chain.headIndex + 1}` });
    // Made here from a committed (so verified) head: the incremental link check against that head
    // (verifyLinkFromHead: proof of knowledge, delta, L and H against the head's) is the whole proof
    // needed.
    const link = await verifyOnePassLink(headPath, staged, made, {
      challenge: { key, ...(head ? { head } : {}) },
      ...(chain.head?.sectionHashes ? { headSectionHashes: chain.head.sectionHashes } : {}),
    });
    const accepted = await commitLink(state, chain, staged, {
      contributor,
      contributionHash: link.contributionHash,
      fileHash: made.fileHash,
      sectionHashes: made.sectionHashes,
    });
    await cacheLinkCombinations(stateDir, key, link, { candidate: accepted.fileHash, head: chain.head?.fileHash });
    progress({ type: 'finished', circuit: name });
    return accepted;
  });
}

export interface PreverifiedLink {
  /** The candidate file; it is moved into the chain (rename: keep it on the data folder's filesystem). */
  candidatePath: string;
  /** The head index the candidate was verified against. */
  headIndex: number;
  /** BLAKE2b-512 of the candidate as verified: the committed bytes must be exactly these. */
  fileHash: string;
  /** Its sections' hashes, when they were taken with `fileHash` (in the same pass); else the commit takes them. */
  sectionHashes?: SectionHashes;
  /**
   * The candidate's identity when `fileHash` was taken, if the caller saw it unchanged across the
   * hashing: found equal at commit, the file was not written since, and is not hashed again.
   */
  hashedAs?: FileIdentity;
  contributionHash: string;
  contributor: string;
}

/**
 * Commits a candidate that a verifier (a worker) already checked against head `headIndex`.
 * Refuses with `contribution.not_next` when the head has moved since, and with
 * `chain.file_hash_mismatch` when the file is not the one that was verified, so a verification
 * result can only ever commit the exact bytes it checked, on the exact head it checked them on.
 * The file is hashed again unless its identity (`hashedAs`) shows it untouched since it was hashed
 * and its section hashes came with it.
 */
export async function commitPreverifiedContribution(
  dataDir: string,
  circuitName: string,
  link: PreverifiedLink,
): Promise<AcceptedContribution> {
  return withChain(dataDir, circuitName, async (state, chain, staged) => {
    if (chain.headIndex !== link.headIndex) {
      throw new CoordinatorError(
        'contribution.not_next',
        `the contribution was verified on head ${link.headIndex}, but the head ` +
          `of ${circuitName} is now ${chain.headIndex}`,
      );
    }
    await rename(link.candidatePath, staged);
    const unchanged = link.hashedAs !== undefined && sameFileIdentity(await fileIdentity(staged), link.hashedAs);
    const hashes =
      unchanged && link.sectionHashes
        ? { fileHash: link.fileHash, sectionHashes: link.sectionHashes }
        : await hashKeyFile(staged, 'the contribution');
    if (hashes.fileHash !== link.fileHash) {
      throw new CoordinatorError('chain.file_hash_mismatch', 'the candidate file changed after it was verified');
    }
    return commitLink(state, chain, staged, {
      contributor: link.contributor,
      contributionHash: link.contributionHash,
      ...hashes,
    });
  });
}

/** `ceremony verify`: is FILE a valid next link on the head of CIRCUIT? Changes nothing. */
export async function verifyCandidate(
  dataDir: string,
  circuitName: string,
  candidatePath: string,
): Promise<VerifiedLink> {
  const state = await openCeremony(dataDir);
  const chain = requireChain(state, circuitName);
  refuseIfClosed(state, chain);
  return verifyAgainstHead(state, chain, candidatePath);
}
