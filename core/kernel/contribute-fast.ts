/**
 * A Phase 2 contribution in Node with the G1 kernel on every core: snarkjs's own `zkey contribute`
 * (or `beacon`, for a deterministic secret) with L and H scaled by the kernel pool. The output is a
 * standard snarkjs zkey; the returned hash is the one snarkjs prints.
 */
import * as snarkjs from 'snarkjs';
import { getBn128 } from '../crypto/bn128.ts';
import type { ContributionRecord } from '../delta/streamed-delta.ts';
import {
  captureScaleChain,
  installFastApplyKey,
  type FastApplyKeyStats,
  type PatchableCurve,
} from './fast-apply-key.ts';
import { nodeScalePool } from './node-scale-pool.ts';

export interface FastContributionOptions {
  /** Threads for the kernel (default: every core). */
  workers?: number;
  /** snarkjs's logger (its counted progress: "Applying key: L Section: i/n"). */
  logger?: snarkjs.Logger;
}

export interface FastContributionResult {
  hash: string;
  workers: number;
  stats: FastApplyKeyStats;
}

/**
 * The kernel is installed on the process's one shared curve, so contributions take turns: two at
 * once would each save the other's patch as "the original" and leave a closed pool installed.
 */
let kernelTurn: Promise<unknown> = Promise.resolve();

function withKernel(options: FastContributionOptions, run: () => Promise<Uint8Array>): Promise<FastContributionResult> {
  const turn = kernelTurn.then(() => withKernelNow(options, run));
  kernelTurn = turn.catch(() => {});
  return turn;
}

async function withKernelNow(
  options: FastContributionOptions,
  run: () => Promise<Uint8Array>,
): Promise<FastContributionResult> {
  const curve: PatchableCurve = await getBn128();
  const pool = await nodeScalePool(options.workers);
  const stats: FastApplyKeyStats = { kernelPoints: 0, fallbackPoints: 0 };
  const restore = installFastApplyKey(curve, pool, stats);
  try {
    const hash = await run();
    return { hash: Buffer.from(hash).toString('hex'), workers: pool.workers, stats };
  } finally {
    restore();
    pool.close();
  }
}

/** `snarkjs zkey contribute`, with the kernel. `entropy` is mixed into snarkjs's own randomness. */
export function contributeFast(
  headPath: string,
  outPath: string,
  name: string,
  entropy: string,
  options: FastContributionOptions = {},
): Promise<FastContributionResult> {
  return withKernel(
    options,
    () => snarkjs.zKey.contribute(headPath, outPath, name, entropy, options.logger) as Promise<Uint8Array>,
  );
}

/**
 * `snarkjs zkey beacon` (a secret derived from a public beacon), with the kernel: the coordinator's
 * final contribution (core/finalise), byte for byte the key snarkjs's own beacon writes.
 */
export function beaconFast(
  headPath: string,
  outPath: string,
  name: string,
  beaconHex: string,
  iterationsExp: number,
  options: FastContributionOptions = {},
): Promise<FastContributionResult> {
  return withKernel(options, async () => {
    const hash = await snarkjs.zKey.beacon(headPath, outPath, name, beaconHex, iterationsExp, options.logger);
    if (!hash) throw new Error('snarkjs refused the beacon');
    return hash;
  });
}

/** Room for the contribution record the new small key adds (a few hundred bytes plus the name). */
const RECORD_SLACK_BYTES = 64 * 1024;

/**
 * snarkjs's contribution on a head's small sections (core/delta/streamed-delta.ts: L with one
 * placeholder point, H empty), made in memory: the new header, δ and record, the hash, and the
 * kernel's chain for the secret's inverse, kept from the one scaling snarkjs asks for
 * (`captureScaleChain`).
 */
export function contributionRecord(smallKey: Uint8Array, name: string, entropy: string): Promise<ContributionRecord> {
  return recordOnSmallKey(
    smallKey,
    (output) => snarkjs.zKey.contribute(smallKey, output, name, entropy) as Promise<Uint8Array>,
    // A secret whose chain the kernel cannot follow (about 2^-250 for a random one): draw another.
    'the secret drawn cannot be applied by the kernel; take the turn again',
  );
}

/**
 * snarkjs's beacon on a head's small sections, as `contributionRecord` makes a contribution's: the
 * coordinator's final contribution made in one pass (core/delta/one-pass-contribution.ts), byte for
 * byte the record `zkey beacon` writes.
 */
export function beaconRecord(
  smallKey: Uint8Array,
  name: string,
  beaconHex: string,
  iterationsExp: number,
): Promise<ContributionRecord> {
  return recordOnSmallKey(
    smallKey,
    async (output) => {
      const hash = await snarkjs.zKey.beacon(smallKey, output, name, beaconHex, iterationsExp);
      if (!hash) throw new Error('snarkjs refused the beacon');
      return hash;
    },
    // As unlikely as for a random secret, and a beacon cannot be drawn again: said plainly.
    "the kernel's scaling chain cannot follow this beacon's secret",
  );
}

function recordOnSmallKey(
  smallKey: Uint8Array,
  run: (output: snarkjs.MemFile) => Promise<Uint8Array>,
  unfollowable: string,
): Promise<ContributionRecord> {
  const turn = kernelTurn.then(async () => {
    const curve: PatchableCurve = await getBn128();
    const capture = captureScaleChain(curve);
    try {
      const output: snarkjs.MemFile = { type: 'mem', initialSize: smallKey.byteLength + RECORD_SLACK_BYTES };
      const hash = await run(output);
      const chain = capture.chain;
      if (!chain) throw new Error(unfollowable);
      if (!output.data) throw new Error('snarkjs produced no key');
      return { zkey: output.data, hash: Buffer.from(hash).toString('hex'), chain };
    } finally {
      capture.restore();
    }
  });
  kernelTurn = turn.catch(() => {});
  return turn;
}
