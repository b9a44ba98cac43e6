/**
 * The lobby's public shapes: options (with documented defaults), a contributor's progress through
 * the circuits, the turns in progress and the events a tick produces. No behaviour here.
 */
import type { ErrorCode } from '../../core/errors.ts';
import type { QueueLogOptions } from './queue-log-store.ts';

export interface LobbyOptions {
  /** Contribution order (ceremony.json order). Every contributor works through them in this order. */
  circuits: readonly string[];
  /** The ceremony's id: the queue log's genesis is bound to it. */
  ceremonyId: string;
  /** The public queue log's file and the step receipts' signer (queue-log-store.ts); none: neither. */
  queueLog?: Omit<QueueLogOptions, 'ceremonyId'>;
  /**
   * A waiting entry whose contributor's client has not asked for news (GET /api/me, a join) for
   * this long is away: it keeps its place but is passed over until seen again. 0: presence off
   * (every entry always present). Default 60 s.
   */
  presenceMs?: number;
  /**
   * A granted turn must be taken (its first download or heartbeat) within this, or it passes to
   * the next in line and the entry goes back to its place, away, not counted as a missed turn.
   * 0: off (a turn counts as taken when granted, as before presence). Default 30 s.
   */
  takeTurnMs?: number;
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
  /**
   * Missed turns in one circuit (since the contributor last joined) after which the entry leaves
   * the queue instead of going to its back; joining again starts a new count. Default 3.
   */
  maxMissedTurns?: number;
}

export const LOBBY_DEFAULTS = Object.freeze({
  presenceMs: 60_000,
  takeTurnMs: 30_000,
  turnTimeoutMs: 10 * 60_000,
  heartbeatExtensionMs: 2 * 60_000,
  maxTurnMs: 60 * 60_000,
  cooldownMs: 5 * 60_000,
  defaultTurnEstimateMs: 3 * 60_000,
  maxMissedTurns: 3,
});

export type ResolvedLobbyOptions = Required<Omit<LobbyOptions, 'queueLog'>> & Pick<LobbyOptions, 'queueLog'>;

export type CircuitProgress =
  /** Later in the order than the circuit the contributor is at (or not joined yet). */
  | { circuit: string; state: 'pending' }
  /**
   * In this circuit's queue. position 1 = next in FIFO order; etaMs estimates the wait until the
   * turn (see estimate-wait.ts); eligibleAt is set only while a missed-turn cooldown is running.
   */
  | { circuit: string; state: 'waiting'; position: number; etaMs: number; eligibleAt?: number }
  /** takeBy: set until the turn is taken (a download or a heartbeat); past it the turn passes on. */
  | { circuit: string; state: 'turn'; startedAt: number; deadline: number; takeBy?: number }
  /** Uploaded; the circuit stays busy until the verification outcome is recorded. */
  | { circuit: string; state: 'verifying'; contributionId: string }
  | { circuit: string; state: 'accepted'; contributionId: string; index: number; contributionHash: string };

export interface LobbyRefusal {
  circuit: string;
  code: ErrorCode;
  message: string;
  at: number;
}

/** Why a contributor's entry left the queue (until they join again). */
export interface LobbyRemoval {
  circuit: string;
  reason: 'missed_turns' | 'coordinator';
  message: string;
  at: number;
}

/** One waiting entry as the coordinator console lists it. */
export interface QueueEntry {
  circuit: string;
  contributorId: string;
  position: number;
  enqueuedAt: number;
  /** Set while a missed-turn cooldown runs. */
  eligibleAt?: number;
  missedTurns: number;
  /** Not seen for the presence period: passed over until seen again. */
  away?: true;
}

export interface ContributorStatus {
  contributorId: string;
  circuits: CircuitProgress[];
  /** The most recent refused contribution of this contributor (kept until another refusal replaces it). */
  lastRefusal?: LobbyRefusal;
  /** Set when the contributor's entry left the queue (missed turns, or the coordinator); cleared by joining again. */
  removed?: LobbyRemoval;
  /** Every configured circuit has an accepted contribution from this contributor. */
  done: boolean;
  /** The circuits asked for when joining, in ceremony order (absent: every circuit). */
  chosenCircuits?: string[];
  /** Left while a contribution was being verified: its verdict queues them nowhere. */
  leaving?: true;
  /** The presence rules, for the client to say what leaving the page costs (0: off). */
  presence: { awayAfterMs: number; takeTurnWithinMs: number };
}

/** What `Lobby.leave` took the contributor out of. */
export type LeaveOutcome =
  | { left: 'waiting'; circuit: string }
  /** The turn is given up (the circuit goes to the next in line); an unfinished upload is dropped. */
  | { left: 'turn'; circuit: string }
  /** A contribution is being verified: it still gets its verdict, after which nothing is queued. */
  | { left: 'after_verdict'; circuit: string }
  /** Not in any queue, turn or verification: nothing to leave. */
  | { left: 'nothing' };

export interface ActiveTurn {
  circuit: string;
  contributorId: string;
  state: 'turn' | 'verifying';
  /** Only for state 'turn': verifying submissions have no deadline. */
  deadline?: number;
}

export type LobbyEvent =
  | { type: 'turn_granted'; circuit: string; contributorId: string; at: number; deadline: number }
  | { type: 'turn_missed'; circuit: string; contributorId: string; at: number; deadline: number; eligibleAt: number }
  /** A turn not taken in time: passed on, its entry back in its place, away (not a missed turn). */
  | { type: 'turn_passed_on'; circuit: string; contributorId: string; at: number; takeBy: number }
  | {
      type: 'entry_removed';
      circuit: string;
      contributorId: string;
      at: number;
      reason: LobbyRemoval['reason'];
      missedTurns?: number;
    };
