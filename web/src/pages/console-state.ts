/**
 * What the coordinator console shows, computed from the coordinator's answers: which phase
 * buttons are live, who can be taken out of the lobby, and whether the ceremony can be finalised
 * (with the reason when it cannot). No DOM here, so every rule is unit-tested in Node; the cards
 * that render it are console-cards.ts.
 */
import {
  coordinatorMovesFrom,
  type CeremonyPhase,
  type CoordinatorPhase,
} from '../../../core/ceremony/ceremony-phases.ts';
import type { AdminOverview, AdminQueue } from '../api/api-types.ts';
import { formatTime } from '../ui/format-units.ts';

/**
 * The three phase buttons, in the order shown, each live when the phase table allows its move; once
 * the beacon is announced, never Open (the coordinator refuses it: ceremony.beacon_announced).
 */
export function phaseButtons(
  phase: CeremonyPhase,
  beaconAnnounced = false,
): Array<{ phase: CoordinatorPhase; allowed: boolean }> {
  const moves = coordinatorMovesFrom(phase).filter((next) => !(beaconAnnounced && next === 'open'));
  return (['open', 'paused', 'closed'] as const).map((next) => ({ phase: next, allowed: moves.includes(next) }));
}

/** One row of the console's queue table: a turn not yet uploaded, or a waiting entry. */
export interface RemovableEntry {
  circuit: string;
  contributorId: string;
  /** 'turn', or the place in the queue (`#2`, with ' (cooling down)' during a missed-turn cooldown). */
  where: string;
  /** Missed turns, blank for a turn. */
  missed: string;
}

/** Who the coordinator can take out of the lobby: turns under way first (not those being verified), then the queues. */
export function removableEntries(queue: AdminQueue): RemovableEntry[] {
  return [
    ...queue.activeTurns
      .filter((turn) => turn.state === 'turn')
      .map((turn) => ({ circuit: turn.circuit, contributorId: turn.contributorId, where: 'turn', missed: '' })),
    ...queue.entries.map((entry) => ({
      circuit: entry.circuit,
      contributorId: entry.contributorId,
      where: `#${entry.position}${entry.eligibleAt ? ' (cooling down)' : ''}`,
      missed: String(entry.missedTurns),
    })),
  ];
}

/**
 * Whether the finalise button is live, and the hint beside it. The coordinator refuses to finalise
 * below ceremony.json's minContributions (finalise.too_few_contributions), while it is not closed
 * (ceremony.not_closed) and while a verification runs (ceremony.locked): the hint says which.
 */
export function finaliseReadiness(overview: AdminOverview): { canFinalise: boolean; hint: string } {
  const short = overview.heads.filter((head) => head.headIndex < overview.minContributions);
  const canFinalise = overview.phase === 'closed' && overview.verifying.length === 0 && short.length === 0;
  const announced = overview.beaconAnnouncement;
  if (canFinalise && announced)
    return {
      canFinalise,
      hint:
        `The beacon is announced: leave its field empty and the coordinator takes block ` +
        `${announced.blockNumber}'s hash, hashed 2^${announced.iterationsExp} times, once the ` +
        `block has its confirmations.`,
    };
  if (canFinalise)
    return { canFinalise, hint: 'The ceremony is closed and no verification is running: it can be finalised.' };
  if (short.length > 0) {
    const minimum = overview.minContributions;
    const contributions = `contribution${minimum === 1 ? '' : 's'}`;
    const required = `Every circuit needs at least ${minimum} ${contributions} before finalising`;
    const tooFew = short.map((head) => `${head.circuit} (${head.headIndex})`).join(', ');
    return { canFinalise, hint: `${required}; too few for: ${tooFew}.` };
  }
  return { canFinalise, hint: 'Close the ceremony and let running verifications finish before finalising.' };
}

/** The beacon card's text, and whether its form may be sent now. */
export interface BeaconAnnouncementState {
  canAnnounce: boolean;
  /** The announcement once made, and its transcript entry's hash; the form is hidden then. */
  announced?: string;
  announcedHash?: string;
  hint: string;
}

/**
 * Whether the console may announce the beacon (POST /api/admin/beacon/announce), or what was
 * announced. The coordinator refuses while the ceremony is not closed (ceremony.not_closed), while
 * a turn runs (ceremony.locked), and without an endpoint to check the block (BEACON_RPC_URL).
 */
export function beaconAnnouncementState(overview: AdminOverview): BeaconAnnouncementState {
  const announced = overview.beaconAnnouncement;
  if (announced)
    return {
      canAnnounce: false,
      announced:
        `The beacon is the hash of block ${announced.blockNumber} of chain ${announced.chainId}, hashed ` +
        `2^${announced.iterationsExp} times, announced ${formatTime(announced.time)} in transcript entry ` +
        `${announced.seq}, whose hash is:`,
      announcedHash: announced.hash,
      hint: 'Contributions are closed for good. Finalise once the block is mined and has its confirmations.',
    };
  if (!overview.beaconFromChain)
    return {
      canAnnounce: false,
      hint:
        'The coordinator has no BEACON_RPC_URL to check the block against: set it and restart, or ' +
        'announce with `ceremony announce-beacon` on the data folder.',
    };
  if (overview.phase !== 'closed')
    return { canAnnounce: false, hint: 'Close the ceremony first: the announcement closes contributions for good.' };
  if (overview.activeTurns.length > 0)
    return { canAnnounce: false, hint: 'Let the turns under way finish (or end them) before announcing.' };
  return {
    canAnnounce: true,
    hint:
      'Commit to a block not mined yet (at least 5 ahead of the chain): its hash will be the beacon, so ' +
      'nobody, the coordinator included, could know it when the last contribution was made. Publish ' +
      'the announcement before the block is mined.',
  };
}
