/**
 * A contribution made and spliced onto its head in one pass, in this process, the way a
 * contributor's streamed turn makes it and the coordinator takes it in, without a file or a
 * network between (the local `ceremony contribute`, core/ceremony/extend-chain.ts, and the final
 * beacon, core/finalise/streamed-beacon.ts):
 *  - the caller's `makeRecord` runs snarkjs on the head's small sections only (the header, δ, the
 *    history): the new header, δ and record, and the kernel's chain for the secret's inverse;
 *  - L and H are read from the head (`skeletonStream`), scaled slice by slice on the kernel's
 *    threads (every thread fed: the next slices are read while the current ones scale) and written
 *    with the head's unchanged sections into the new key, which is hashed as it is written;
 *  - given the circuit's link-challenge key, the new key's sums for its link check are taken from
 *    the points as they are written (core/link-check/streamed-candidate-sums.ts), so the check
 *    that follows needs no MSM over the new key.
 * The key is byte for byte what snarkjs's own `zkey contribute` or `zkey beacon` writes for the
 * same secret (both write the sections in ascending order; the record is snarkjs's). What this saves
 * against running snarkjs on the whole key with the kernel under it: snarkjs's copy of sections 3
 * to 7 through its file layer, the wait between its chunks of L and H, and a second read of the
 * whole key to hash it and to sum it.
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
  /** The points of L and H, once known, then the count scaled so far. */
  onPoints?(total: number): void;
  onScaled?(done: number): void;
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
  const { headPath, outPath } = request;
  // A staged key a crash left behind: this one replaces it.
  await rm(outPath, { force: true });
  const sums = request.circuitKey
    ? await StreamedCandidateSums.start(request.circuitKey, headPath).catch(() => undefined)
    : undefined;
  const pool = await nodeScalePool(request.workers);
  const reader = new ExactReader(skeletonStream(headPath));
  let splice: StreamedSplice | undefined;
  try {
    splice = await StreamedSplice.open(headPath, outPath, (section, first, points) =>
      sums?.add(section, first, points),
    );
    const delta = await startStreamedDelta({
      reader,
      scaler: pool,
      makeRecord: request.makeRecord,
      ...(request.onPoints ? { onPoints: request.onPoints } : {}),
      ...(request.onScaled ? { onScaled: request.onScaled } : {}),
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
