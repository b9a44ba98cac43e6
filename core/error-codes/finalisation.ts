/**
 * Finalisation: the beacon, its announcement and the block it comes from.
 */
import { type ErrorEntry } from './error-entry.ts';

export const FINALISATION_CODES = {
  'finalise.bad_beacon': {
    kind: 'caller',
    what: 'The beacon must be a hexadecimal value (up to 255 bytes).',
    next: 'Correct the beacon and finalise again.',
  },
  'finalise.bad_iterations': {
    kind: 'caller',
    what: 'The iteration count must be an exponent from 10 to 63.',
    next: 'Correct it and finalise again.',
  },
  /** A chain has fewer contributions than ceremony.json's minContributions (≥ 1), so it may not be finalised. */
  'finalise.too_few_contributions': {
    kind: 'conflict',
    what: 'A circuit has fewer contributions than the ceremony requires, so it cannot be finalised yet.',
    next: 'Open the ceremony until every circuit has enough contributions.',
  },
  'finalise.beacon_mismatch': {
    kind: 'conflict',
    what: 'The ceremony was already partly finalised with a different beacon.',
    next: 'Finalise with the beacon and iterations used before.',
  },
  'finalise.verification_failed': {
    kind: 'operator',
    what: 'A final key did not verify.',
    next: 'Do not publish; check the server logs and run `ceremony audit`.',
  },
  /** The beacon is announced: contributions are closed (and it is announced once, before any beacon is applied). */
  'ceremony.beacon_announced': {
    kind: 'conflict',
    what: 'The beacon is announced, so the ceremony takes no more contributions.',
    next: 'Nothing to do: the ceremony is being finalised. Your earlier contributions stand.',
    nextInTerminal: 'Contributions are closed; finalise with the announced beacon.',
  },
  /** The block a beacon announcement would name is mined already, or too close to be unknown when seen. */
  'beacon.block_too_soon': {
    kind: 'conflict',
    what: 'The block named for the beacon is mined already, or too close to be unknown when the announcement is out.',
    next: 'Announce a block further ahead.',
  },
  /** The announced block is not mined yet, or has fewer confirmations than asked for: no beacon yet. */
  'beacon.block_not_final': {
    kind: 'conflict',
    what: 'The announced block is not mined yet, or not enough blocks are on top of it.',
    next: 'Wait for it, then finalise again.',
  },
  /** The RPC endpoint given for the beacon's block serves another chain than the announcement names. */
  'beacon.wrong_chain': {
    kind: 'upstream',
    what: 'The RPC endpoint given for the beacon serves another chain than the announcement names.',
    next: 'Give an endpoint of the announced chain.',
  },
  /** The RPC endpoint given for the beacon's block did not answer. */
  'beacon.rpc_unavailable': {
    kind: 'upstream',
    what: 'The RPC endpoint given for the beacon did not answer.',
    next: 'Check the endpoint and try again.',
  },
  /** A final key's beacon is not the hash of the announced block (the audit, over RPC). */
  'audit.beacon_not_announced': {
    kind: 'operator',
    what: 'A final key applies a beacon that is not the hash of the block the transcript announced.',
    next: 'Do not trust the final keys: the coordinator could have chosen the beacon.',
  },
} satisfies Record<string, ErrorEntry>;
