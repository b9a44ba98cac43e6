/**
 * A contributor's progress through the circuits and the lobby's queues and turns, as the
 * coordinator keeps them (server/lobby/) and answers them (GET /api/me, /api/admin/overview,
 * /api/admin/queue) to the browser. Types, and the one rule both sides apply to a held poll, shared
 * by server/, client/ and web/.
 */
import type { ErrorCode } from '../errors.ts';

/**
 * The deepest place in a queue (1 = next) whose `GET /api/me?turnWaitMs` is held: every entry a
 * standby offer can reach with the default settings (20 behind the grantee: TAKE_PRIORITY_MS 5 s,
 * then one more each STANDBY_STEP_MS 1.25 s until TAKE_TURN_MS 30 s), with a margin. The client
 * holds its poll within it, so an entry the offer reaches hears of it within a round trip rather
 * than at its next paced poll (longer than a step); the coordinator holds none further back, where
 * each held poll would only cost a status read at every lobby tick.
 */
export const HOLD_TURN_WAIT_WITHIN = 24;

export type CircuitProgress =
  /** Later in the order than the circuit the contributor is at (or not joined yet). */
  | { circuit: string; state: 'pending' }
  /**
   * In this circuit's queue. position 1 = next in FIFO order; etaMs estimates the wait until the
   * turn (see estimate-wait.ts); eligibleAt is set only while a missed-turn cooldown is running.
   */
  /**
   * standbyUntil: the turn granted to someone ahead is not taken yet, and the rules offer it to this
   * entry too (standby, turn-order.ts): the first download of the circuit's head or inputs before
   * then takes it, as a granted turn's would; another entry may take it first.
   */
  | { circuit: string; state: 'waiting'; position: number; etaMs: number; eligibleAt?: number; standbyUntil?: number }
  /** takeBy: set until the turn is taken (a download or a heartbeat); past it the turn passes on. */
  | { circuit: string; state: 'turn'; startedAt: number; deadline: number; takeBy?: number }
  /** Uploaded; the circuit stays busy until the verification outcome is recorded. */
  | { circuit: string; state: 'verifying'; contributionId: string }
  | { circuit: string; state: 'accepted'; contributionId: string; index: number; contributionHash: string };

/**
 * The answer to a turn's heartbeat: its deadline now, and when the client should beat next (the
 * coordinator ends a taken turn whose client falls silent, so the pace is its to set).
 */
export interface TurnHeartbeat {
  deadline: number;
  heartbeatEveryMs: number;
}

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
  presence: {
    awayAfterMs: number;
    takeTurnWithinMs: number;
    silentTurnAfterMs?: number;
    goneAfterDisconnectMs?: number;
  };
}

export interface ActiveTurn {
  circuit: string;
  contributorId: string;
  state: 'turn' | 'verifying';
  /** Only for state 'turn': verifying submissions have no deadline. */
  deadline?: number;
}
