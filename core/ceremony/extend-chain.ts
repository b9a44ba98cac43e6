/**
 * Adding a link to a circuit's chain: verify the staged candidate against the head, move it into
 * place under its index, then commit it with a transcript entry. The order is what makes it crash
 * safe: until the transcript entry is written the new file is an orphan beyond the head, which the
 * next write replaces; a refused candidate never touches the chain.
 */
import { copyFile, readdir, rm, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import * as snarkjs from 'snarkjs';
import { commitFile, isTempPath, tempPathFor } from '../fs/atomic-write.ts';
import { hashFile } from '../crypto/file-hash.ts';
import { CoordinatorError } from '../errors.ts';
import { verifyContribution, type VerifiedLink } from '../verify/verify-contribution.ts';
import { withCeremonyLock } from '../chain/ceremony-lock.ts';
import { ceremonyPaths } from '../chain/ceremony-paths.ts';
import { openCeremony, requireChain, type CeremonyState, type CircuitChain } from './open-ceremony.ts';

export interface AcceptedContribution {
  circuit: string;
  index: number;
  contributor: string;
  contributionHash: string;
  fileHash: string;
  path: string;
}

/** Verifies a candidate against the current head of a chain, changing nothing. */
export async function verifyAgainstHead(state: CeremonyState, chain: CircuitChain, candidatePath: string): Promise<VerifiedLink> {
  return verifyContribution({
    initZkeyPath: state.paths.zkeyPath(chain.circuit.name, 0),
    ptauPath: state.config.ptauPath,
    headZkeyPath: state.paths.zkeyPath(chain.circuit.name, chain.headIndex),
    candidatePath,
  });
}

function refuseIfClosed(state: CeremonyState, chain: CircuitChain): void {
  if (state.finalised || chain.beacon) {
    throw new CoordinatorError('ceremony.finalised', `circuit ${chain.circuit.name} is finalised; it takes no more contributions`);
  }
}

/** Removes temporary files a crashed writer left in a chain folder (only called under the lock). */
async function removeLeftovers(chainDir: string): Promise<void> {
  const names = await readdir(chainDir).catch(() => [] as string[]);
  await Promise.all(names.filter(isTempPath).map((name) => rm(path.join(chainDir, name), { force: true })));
}

async function commitStagedLink(state: CeremonyState, chain: CircuitChain, staged: string, contributor: string): Promise<AcceptedContribution> {
  const link = await verifyAgainstHead(state, chain, staged);
  const fileHash = await hashFile(staged);
  const index = chain.headIndex + 1;
  const target = state.paths.zkeyPath(chain.circuit.name, index);
  await commitFile(staged, target);
  await state.transcript.append([
    { type: 'contribution', circuit: chain.circuit.name, index, contributor, contributionHash: link.contributionHash, fileHash },
  ]);
  return { circuit: chain.circuit.name, index, contributor, contributionHash: link.contributionHash, fileHash, path: target };
}

async function withChain<T>(dataDir: string, circuitName: string, work: (state: CeremonyState, chain: CircuitChain, stagedPath: string) => Promise<T>): Promise<T> {
  return withCeremonyLock(ceremonyPaths(dataDir).lockPath, async () => {
    const state = await openCeremony(dataDir);
    const chain = requireChain(state, circuitName);
    refuseIfClosed(state, chain);
    const chainDir = state.paths.chainDir(chain.circuit.name);
    await mkdir(chainDir, { recursive: true });
    await removeLeftovers(chainDir);
    const staged = tempPathFor(state.paths.zkeyPath(chain.circuit.name, chain.headIndex + 1));
    try {
      return await work(state, chain, staged);
    } finally {
      await rm(staged, { force: true });
    }
  });
}

/**
 * Accepts a contribution made elsewhere (an upload, a file given to the CLI). The file is copied
 * into the chain folder first and the copy is what gets verified and committed, so the bytes
 * checked are the bytes kept.
 */
export async function acceptContribution(dataDir: string, circuitName: string, candidatePath: string, contributor: string): Promise<AcceptedContribution> {
  return withChain(dataDir, circuitName, async (state, chain, staged) => {
    await copyFile(candidatePath, staged);
    return commitStagedLink(state, chain, staged, contributor);
  });
}

/**
 * Makes one contribution on this machine: fresh entropy from the OS, held only in memory for the
 * length of the snarkjs call (never logged or written), then verified and committed like any other.
 */
export async function contributeLocally(dataDir: string, circuitName: string, contributor: string): Promise<AcceptedContribution> {
  return withChain(dataDir, circuitName, async (state, chain, staged) => {
    const headPath = state.paths.zkeyPath(chain.circuit.name, chain.headIndex);
    await snarkjs.zKey.contribute(headPath, staged, contributor, randomBytes(64).toString('hex'));
    return commitStagedLink(state, chain, staged, contributor);
  });
}

/** `ceremony verify`: is FILE a valid next link on the head of CIRCUIT? Changes nothing. */
export async function verifyCandidate(dataDir: string, circuitName: string, candidatePath: string): Promise<VerifiedLink> {
  const state = await openCeremony(dataDir);
  const chain = requireChain(state, circuitName);
  refuseIfClosed(state, chain);
  return verifyAgainstHead(state, chain, candidatePath);
}
