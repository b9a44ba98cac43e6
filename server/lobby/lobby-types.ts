/**
 * The lobby's public shapes: options (with documented defaults), a contributor's progress through
 * the circuits, the turns in progress and the events a tick produces. No behaviour here.
 */

export interface LobbyOptions {
  /** Contribution order (ceremony.json order). Every contributor works through them in this order. */
  circuits: readonly string[];
  /** A turn's initial deadline, from the moment it is granted. Default 10 min. */
  turnTimeoutMs?: number;
  /** A heartbeat sets deadline = max(deadline, now + this), capped by maxTurnMs. Default 2 min. */
  heartbeatExtensionMs?: number;
  /** No turn lasts beyond startedAt + this, however many heartbeats. Default 60 min. */
  maxTurnMs?: number;
  /** After a missed deadline the contributor is not eligible for a turn before now + this. Default 5 min. */
  cooldownMs?: number;
  /** Ceremony phase: turns are granted only while this returns true (deadlines fire regardless). */
  isOpen: () => boolean;
  /** ETA per turn for a circuit before any of its turns was measured. Default 3 min. */
  defaultTurnEstimateMs?: number;
}

export const LOBBY_DEFAULTS = Object.freeze({
  turnTimeoutMs: 10 * 60_000,
  heartbeatExtensionMs: 2 * 60_000,
  maxTurnMs: 60 * 60_000,
  cooldownMs: 5 * 60_000,
  defaultTurnEstimateMs: 3 * 60_000,
});

export type ResolvedLobbyOptions = Required<LobbyOptions>;

export type CircuitProgress =
  /** Later in the order than the circuit the contributor is at (or not joined yet). */
  | { circuit: string; state: 'pending' }
  /**
   * In this circuit's queue. position 1 = next in FIFO order; etaMs estimates the wait until the
   * turn (see estimate-wait.ts); eligibleAt is set only while a missed-turn cooldown is running.
   */
  | { circuit: string; state: 'waiting'; position: number; etaMs: number; eligibleAt?: number }
  | { circuit: string; state: 'turn'; startedAt: number; deadline: number }
  /** Uploaded; the circuit stays busy until the verification outcome is recorded. */
  | { circuit: string; state: 'verifying'; contributionId: string }
  | { circuit: string; state: 'accepted'; contributionId: string; index: number; contributionHash: string };

export interface LobbyRefusal {
  circuit: string;
  code: string;
  message: string;
  at: number;
}

export interface ContributorStatus {
  contributorId: string;
  circuits: CircuitProgress[];
  /** The most recent refused contribution of this contributor (kept until another refusal replaces it). */
  lastRefusal?: LobbyRefusal;
  /** Every configured circuit has an accepted contribution from this contributor. */
  done: boolean;
}

export interface ActiveTurn {
  circuit: string;
  contributorId: string;
  state: 'turn' | 'verifying';
  /** Only for state 'turn': verifying submissions have no deadline. */
  deadline?: number;
}

export type LobbyEvent =
  | { type: 'turn_granted'; circuit: string; contributorId: string; at: number; deadline: number }
  | { type: 'turn_missed'; circuit: string; contributorId: string; at: number; deadline: number; eligibleAt: number };
