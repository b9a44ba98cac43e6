/**
 * The verification request of a contribution, derived from what is stored of it alone (its row,
 * its candidate row, the head's transcript entry): a contribution re-sent after a restart gets
 * the request it got in normal running, since nothing of it lives only in the process.
 */
import { serialiseFileIdentity } from '../../core/fs/file-identity.ts';
import type { SectionHashes } from '../../core/zkey/zkey-hashes.ts';
import type { HeadPreparationRequest, VerificationRequest } from '../../core/verifier-contract/verifier-contract.ts';
import type { CandidateRow } from './candidate-store.ts';
import type { ContributionRow } from './contribution-store.ts';
import type { CeremonyState } from '../../core/ceremony/open-ceremony.ts';
import { stateDirFor } from '../../core/link-check/link-challenge.ts';

/** The head a contribution extends, as its transcript entry records it. */
export interface HeadEntry {
  fileHash: string;
  sectionHashes?: SectionHashes;
}

export interface RequestPlaces {
  headZkeyPath: string;
  /** The coordinator's state folder (stateDirFor), where the challenge's secret and caches live. */
  stateDir: string;
}

export function verificationRequest(
  row: Pick<ContributionRow, 'id' | 'circuit' | 'headIndex' | 'candidatePath' | 'fileHash'>,
  candidate: (Pick<CandidateRow, 'sectionHashes' | 'identity'> & Partial<Pick<CandidateRow, 'sums'>>) | undefined,
  head: HeadEntry | undefined,
  places: RequestPlaces,
): VerificationRequest {
  // The head's file hash names its cached combination (one MSM per link); the candidate's sums,
  // when the intake made them, spare the verifier reading its L and H.
  const sums = candidate?.sums ? { candidateSums: Buffer.from(candidate.sums).toString('base64') } : {};
  const challenge = head
    ? {
        challenge: {
          stateDir: places.stateDir,
          headFileHash: head.fileHash,
          candidateFileHash: row.fileHash,
          ...sums,
        },
      }
    : {};
  // Without the candidate's hashes and identity (a database of a version before the candidates
  // table), the verifier compares the fixed sections byte for byte: slower, same verdict.
  const sectionHashes =
    head?.sectionHashes && candidate?.sectionHashes && candidate.identity
      ? {
          sectionHashes: {
            head: head.sectionHashes,
            candidate: candidate.sectionHashes,
            candidateIdentity: serialiseFileIdentity(candidate.identity),
          },
        }
      : {};
  return {
    contributionId: row.id,
    circuit: row.circuit,
    headIndex: row.headIndex,
    headZkeyPath: places.headZkeyPath,
    candidatePath: row.candidatePath,
    ...challenge,
    ...sectionHashes,
  };
}

/** The request of `row` on the ceremony `state` (its head's transcript entry, its paths). */
export function requestFromState(
  row: ContributionRow,
  candidate: CandidateRow | undefined,
  state: CeremonyState,
): VerificationRequest {
  const chain = state.chains.get(row.circuit);
  const head = row.headIndex === 0 ? chain?.init : chain?.contributions.find((entry) => entry.index === row.headIndex);
  return verificationRequest(row, candidate, head, {
    headZkeyPath: state.paths.zkeyPath(row.circuit, row.headIndex),
    stateDir: stateDirFor(state.paths.dataDir),
  });
}

/**
 * The preparation of every head a contribution may still extend on the ceremony `state` (none once
 * it is finalised, nor on a circuit sealed by its beacon).
 */
export function headPreparations(state: CeremonyState): HeadPreparationRequest[] {
  if (state.finalised) return [];
  const stateDir = stateDirFor(state.paths.dataDir);
  return [...state.chains]
    .filter(([, chain]) => chain.head && !chain.beacon)
    .map(([circuit, chain]) => ({
      circuit,
      headZkeyPath: state.paths.zkeyPath(circuit, chain.headIndex),
      stateDir,
      headFileHash: chain.head!.fileHash,
    }));
}
