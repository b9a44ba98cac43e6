/**
 * Committing to the beacon before it can be known. `announceBeacon` writes the transcript's
 * beacon announcement (transcript-format.ts): the beacon will be the hash of a block of a public
 * chain that is not mined yet, hashed 2^N times. From then on the ceremony takes no contribution,
 * so no one, the coordinator included, can choose the last contribution knowing the beacon; and
 * finalise takes the beacon from that block (`finalBeacon`), which the audit checks over RPC.
 */
import type { BeaconAnnouncementEntry, CeremonyState } from '../ceremony/open-ceremony.ts';
import { ceremonyPaths } from '../data-folder/ceremony-paths.ts';
import { withCeremonyLock } from '../data-folder/ceremony-lock.ts';
import { CoordinatorError } from '../errors.ts';
import { readBeaconBlock, requireFutureBlock, type BeaconBlock } from './announced-block.ts';
import { parseBeaconIterations, parseBeaconParameters, type BeaconParameters } from './beacon-parameters.ts';
import { openCeremony, refuseTooFewContributions } from '../ceremony/open-ceremony.ts';

/** Blocks the announced one must be ahead of the chain's latest by default: about a minute on Ethereum. */
export const DEFAULT_MIN_BLOCKS_AHEAD = 5;
/**
 * Blocks on top of the announced one before its hash is taken, by default. Ethereum finalises in
 * two epochs (64 blocks), which a coordinator of a real ceremony should wait for; a test network
 * with blocks on demand has none to wait.
 */
export const DEFAULT_CONFIRMATIONS = 64;

export interface BeaconAnnouncementRequest extends BeaconBlock {
  iterationsExp: number;
}

/** Why the ceremony cannot announce its beacon now, thrown; nothing when it can. */
function refuseToAnnounce(state: CeremonyState): void {
  if (state.finalised) throw new CoordinatorError('ceremony.finalised', 'the ceremony is already finalised');
  const announced = state.beaconAnnouncement;
  if (announced) {
    throw new CoordinatorError(
      'ceremony.beacon_announced',
      `the beacon is already announced: block ${announced.blockNumber} of chain ${announced.chainId}, ` +
        `hashed 2^${announced.iterationsExp} times (transcript entry ${announced.seq})`,
    );
  }
  const chains = [...state.chains.values()];
  if (chains.some((chain) => !chain.head)) {
    throw new CoordinatorError(
      'ceremony.not_initialised',
      'the ceremony is not initialised; run `ceremony init` first',
    );
  }
  const sealed = chains.filter((chain) => chain.beacon);
  if (sealed.length > 0) {
    throw new CoordinatorError(
      'ceremony.beacon_announced',
      `a beacon is already applied to ${sealed.map((chain) => chain.circuit.name).join(', ')}: ` +
        'an announcement now would come after the beacon is known',
    );
  }
  // The announcement closes contributions for good: a chain short of the minimum would never finish.
  refuseTooFewContributions(state);
}

/**
 * Announces the beacon: checks over `rpcUrl` that the block is at least `minBlocksAhead` blocks in
 * the future, then appends the announcement under the ceremony's lock. Returns the entry and the
 * chain's latest block when it was checked.
 */
export async function announceBeacon(
  dataDir: string,
  request: BeaconAnnouncementRequest,
  options: { rpcUrl: string; minBlocksAhead?: number },
): Promise<{ entry: BeaconAnnouncementEntry; latestBlock: number }> {
  parseBeaconIterations(request.iterationsExp);
  return withCeremonyLock(ceremonyPaths(dataDir).lockPath, async () => {
    const state = await openCeremony(dataDir);
    refuseToAnnounce(state);
    const latestBlock = await requireFutureBlock(
      options.rpcUrl,
      request,
      options.minBlocksAhead ?? DEFAULT_MIN_BLOCKS_AHEAD,
    );
    const [entry] = await state.transcript.append([
      {
        type: 'beaconAnnouncement',
        chainId: request.chainId,
        blockNumber: request.blockNumber,
        iterationsExp: request.iterationsExp,
      },
    ]);
    // The one entry appended, as given: an announcement.
    return { entry: entry as BeaconAnnouncementEntry, latestBlock };
  });
}

export interface FinalBeaconOptions {
  /** The beacon the coordinator gives, hexadecimal; with an announcement, it must be the block's hash. */
  beacon?: string;
  /** The exponent the coordinator gives; with an announcement, it must be the announced one. */
  iterations?: string | number;
  /** An endpoint of the announced chain, to read the block's hash from. */
  rpcUrl?: string;
  /** Blocks on top of the announced one before its hash is taken (DEFAULT_CONFIRMATIONS). */
  confirmations?: number;
}

/**
 * The beacon finalise applies. Without an announcement, the coordinator's `beacon` and
 * `iterations`, both required (the audit then says the beacon was not committed to). With one,
 * the announced exponent and the announced block's hash: read over `rpcUrl` when given (and equal
 * to `beacon` if that is given too), else `beacon` as given, which the audit checks against the chain.
 */
export async function finalBeacon(state: CeremonyState, options: FinalBeaconOptions): Promise<BeaconParameters> {
  const announced = state.beaconAnnouncement;
  if (!announced) {
    if (options.beacon === undefined || options.iterations === undefined) {
      throw new CoordinatorError(
        'finalise.bad_beacon',
        'no beacon is announced in the transcript, so finalise needs the beacon and its iterations ' +
          '(announce one first with `ceremony announce-beacon`, so that nobody can have known it)',
      );
    }
    return parseBeaconParameters(options.beacon, options.iterations);
  }
  const iterationsExp = announced.iterationsExp;
  if (options.iterations !== undefined && Number(options.iterations) !== iterationsExp) {
    throw new CoordinatorError(
      'finalise.beacon_mismatch',
      `the announced beacon is hashed 2^${iterationsExp} times, not 2^${String(options.iterations)}`,
    );
  }
  const given = options.beacon === undefined ? undefined : parseBeaconParameters(options.beacon, iterationsExp);
  if (given && given.beaconHex.length !== 64) {
    throw new CoordinatorError(
      'finalise.bad_beacon',
      `the announced beacon is a block hash (32 bytes), not ${given.beaconHex.length / 2} bytes`,
    );
  }
  if (options.rpcUrl === undefined) {
    if (given) return given;
    throw new CoordinatorError(
      'finalise.bad_beacon',
      `the beacon is the hash of block ${announced.blockNumber} of chain ${announced.chainId}: ` +
        'give an RPC endpoint of that chain to read it from, or the block hash as the beacon',
    );
  }
  const { hash: blockHash } = await readBeaconBlock(
    options.rpcUrl,
    announced,
    options.confirmations ?? DEFAULT_CONFIRMATIONS,
  );
  if (given && given.beaconHex !== blockHash) {
    throw new CoordinatorError(
      'finalise.beacon_mismatch',
      `the beacon given is not the hash of block ${announced.blockNumber} of chain ${announced.chainId} ` +
        `(0x${blockHash}), which the announcement commits to`,
    );
  }
  return { beaconHex: blockHash, iterationsExp };
}
