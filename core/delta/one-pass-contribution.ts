/**
 * A contribution made and spliced onto its head in one pass, in this process, the way a
 * contributor's streamed turn makes it and the coordinator takes it in, with no file or network
 * between (the local `ceremony contribute`, core/ceremony/extend-chain.ts, and the final beacon,
 * core/finalise/finalise-ceremony.ts):
 *  - the caller's `makeRecord` runs snarkjs on the head's small sections only (the header, δ, the
 *    history): the new header, δ and record, and the kernel's chain for the secret's inverse;
 *  - L and H are read from the head (`skeletonStream`), scaled slice by slice on the kernel's
 *    threads (the next slices are read while the current ones scale) and written with the head's
 *    unchanged sections into the new key, which is hashed as it is written;
 *  - given the circuit's link-challenge key, the new key's sums for its link check are taken from
 *    the points as they are written (core/link-check/streamed-candidate-sums.ts).
 * `verifyOnePassLink` then checks the new key as the head's next link with what the pass took: no
 * MSM over the new key and no second read of it. The key is byte for byte what snarkjs's own
 * `zkey contribute` or `zkey beacon` writes for the same secret (docs/kernel.md).
 */
import { rm } from 'node:fs/promises';
import { ExactReader } from './exact-reader.ts';
import { skeletonStream } from './skeleton-zkey.ts';
import { startStreamedDelta, UPLOAD_CHUNK_BYTES, type ContributionRecord } from './streamed-delta.ts';
import type { StreamedUploadSource } from './streamed-upload-source.ts';
import { StreamedSplice } from './streamed-splice.ts';
import { nodeScalePool } from '../kernel/node-scale-pool.ts';
import type { CandidateSums } from '../link-check/link-combination-cache.ts';
import { StreamedCandidateSums } from '../link-check/streamed-candidate-sums.ts';
import {
  verifyLinkFromHead,
  type LinkVerdict,
  type VerifyLinkFromHeadOptions,
} from '../link-check/verify-link-from-head.ts';
import type { SectionHashes } from '../zkey/zkey-hashes.ts';

export interface OnePassRequest {
  headPath: string;
  /** Where the new key is written (created; an earlier file there is replaced). */
  outPath: string;
  /** snarkjs on the head's small sections (contributionRecord, beaconRecord). */
  makeRecord(smallKey: Uint8Array): Promise<ContributionRecord>;
  /** The circuit's link-challenge key: with it, the new key's sums are taken as it is written. */
  circuitKey?: Uint8Array;
  /** Kernel threads (default: every core). */
  workers?: number;
  /** Points of L and H scaled so far, of their count. */
  onScaled?(done: number, total: number): void;
}

export interface OnePassContribution {
  /** The contribution hash snarkjs computed while making the record (hex). */
  contributionHash: string;
  /** BLAKE2b-512 of the new key and of its sections, taken as it was written. */
  fileHash: string;
  sectionHashes: SectionHashes;
  /** The new key's sums under `circuitKey`, when they ran to the end (else the check sums the key itself). */
  sums?: CandidateSums;
}

export async function contributeInOnePass(request: OnePassRequest): Promise<OnePassContribution> {
  const { headPath, outPath, onScaled } = request;
  // A staged key a crash left behind: this one replaces it.
  await rm(outPath, { force: true });
  const sums = request.circuitKey
    ? await StreamedCandidateSums.start(request.circuitKey, headPath).catch(() => undefined)
    : undefined;
  const pool = await nodeScalePool(request.workers);
  const reader = new ExactReader(skeletonStream(headPath));
  let splice: StreamedSplice | undefined;
  let total = 0;
  try {
    splice = await StreamedSplice.open(headPath, outPath, (section, first, points) =>
      sums?.add(section, first, points),
    );
    const delta = await startStreamedDelta({
      reader,
      scaler: pool,
      makeRecord: request.makeRecord,
      onPoints: (points) => (total = points),
      ...(onScaled ? { onScaled: (done: number) => onScaled(done, total) } : {}),
    });
    await Promise.race([delta.failed, spliceAll(delta.source, splice, sums)]);
    const fileHash = await splice.finish();
    const summed = await sums?.result();
    return {
      contributionHash: delta.hash,
      fileHash,
      sectionHashes: splice.sectionHashes!,
      ...(summed ? { sums: summed } : {}),
    };
  } catch (error) {
    sums?.cancel();
    await splice?.abort();
    throw error;
  } finally {
    reader.cancel();
    pool.close();
  }
}

/** Hands the delta to the splice in order; the sums' queue bounds how far the splice runs ahead of them. */
async function spliceAll(
  source: StreamedUploadSource,
  splice: StreamedSplice,
  sums: StreamedCandidateSums | undefined,
): Promise<void> {
  for (let at = 0; at < source.size;) {
    await sums?.room();
    const { value } = await source.slice(at, Math.min(at + UPLOAD_CHUNK_BYTES, source.size));
    if (!value) throw new Error(`the delta ended at byte ${at} of ${source.size}`);
    await splice.push(value);
    at += value.byteLength;
  }
}

/**
 * Checks the key a pass made as the next link of its head (verifyLinkFromHead) with what the pass
 * took: the new key's sums beside `options.challenge` (which must be under the key the pass summed
 * with), its section hashes against the head's as the transcript recorded them (a head changed on
 * disk since its commit shows as a difference), and its contribution hash against the one snarkjs
 * computed while making the record, which is the hash shown and recorded.
 */
export async function verifyOnePassLink(
  headPath: string,
  newPath: string,
  made: OnePassContribution,
  options: VerifyLinkFromHeadOptions & { headSectionHashes?: SectionHashes },
): Promise<LinkVerdict> {
  const { headSectionHashes, challenge, ...rest } = options;
  const link = await verifyLinkFromHead(headPath, newPath, {
    ...rest,
    ...(challenge ? { challenge: { ...challenge, ...(made.sums ? { next: made.sums } : {}) } } : {}),
    ...(headSectionHashes ? { sectionHashes: { head: headSectionHashes, candidate: made.sectionHashes } } : {}),
  });
  if (link.contributionHash !== made.contributionHash)
    throw new Error('the new key records another contribution hash than the one computed while making it');
  return link;
}
