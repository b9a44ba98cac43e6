/**
 * The lobby's public shapes: options (with documented defaults), a contributor's progress through
 * the circuits, the turns in progress and the events a tick produces. No behaviour here. The shapes
 * the browser reads too are defined in core/coordinator-api/lobby-status.ts and re-exported here.
 */
import type { LobbyRemoval } from '../../core/coordinator-api/lobby-status.ts';
import type { QueueLogOptions } from './queue-log-store.ts';
import { defaultSettings } from '../config/setting.ts';
import { LOBBY_SETTINGS, lobbyTimings } from './lobby-settings.ts';

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
   * A granted turn must be taken (its first download of the head or inputs, or an upload; not a
   * heartbeat) within this, or it passes to the next in line as a missed turn; the first such miss
   * in a circuit keeps the entry's place, away and passed on (core/queue-log/turn-order.ts). 0:
   * off (a turn counts as taken when granted, as before presence). Default 30 s.
   */
  takeTurnMs?: number;
  /**
   * Standby (core/queue-log/turn-order.ts standbyDepth): a granted turn is its grantee's alone for
   * this long; then, until it is taken or takeTurnMs runs out, the entry next in line may take it
   * too (its first download of the head or inputs), and one more entry every further
   * standbyStepMs. The first to take it holds it; the grant is the grantee's missed turn, not
   * taken. 0: off. Default 5 s.
   */
  takePriorityMs?: number;
  /**
   * Standby's step: after takePriorityMs, the offer reaches one more entry every this long; from
   * 1 ms to takePriorityMs. Default takePriorityMs (the rule before the step); the server passes
   * STANDBY_STEP_MS (lobby-settings.ts, 1.25 s by default).
   */
  standbyStepMs?: number;
  /** A turn's initial deadline, from the moment it is granted. Default 10 min. */
  turnTimeoutMs?: number;
  /**
   * A taken turn whose contributor's client sends nothing for this long (no heartbeat, download or
   * upload request) is missed at once rather than at its deadline: a closed laptop costs the
   * circuit this, not the rest of the turn. Clients are told to beat several times within it. 0:
   * off. Default 2 min, as heartbeatExtensionMs: what a heartbeat already buys once the first
   * deadline has passed.
   */
  turnSilenceMs?: number;
  /**
   * A contributor whose client held the presence stream (GET /api/me/presence) and closed it, and
   * has not been seen or heard from since, is gone this long after the close: their waiting entry
   * is passed over (place kept), a turn granted to them and not yet taken passes on, and a taken
   * turn is missed, without waiting for presenceMs, takeTurnMs or turnSilenceMs. A closed tab or a
   * killed terminal costs a circuit seconds. The grace covers a reload, which opens a new stream;
   * a dropped link closes nothing the server sees. 0: a closed stream means nothing. Default 10 s.
   */
  disconnectGraceMs?: number;
  /**
   * A taken turn none of whose upload has arrived this long after its grant is missed then:
   * heartbeats and downloads alone do not hold a turn. It covers a slow machine's whole
   * contribution before its first byte (a whole-key upload). 0: off. Default 10 min.
   */
  uploadStartMs?: number;
  /**
   * A taken turn whose upload, once started, gains less than UPLOAD_PROGRESS_BYTES (64 KiB) or its
   * size × uploadStallMs / maxTurnMs, whichever is more (or what is left of it), for this long is
   * missed then. 0: off. Default 2 min.
   */
  uploadStallMs?: number;
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
   * Missed turns in one circuit after which the entry leaves the queue instead of going to its
   * back. The count is never reset: joining again is allowed, eligible only after the cooldown,
   * doubled for each miss beyond this (turn-order.ts). Default 3.
   */
  maxMissedTurns?: number;
}

// Standby's step defaults to the lobby's own takePriorityMs (resolveOptions), not the setting's.
const { standbyStepMs: _settingsStep, ...settingsDefaults } = lobbyTimings(defaultSettings(LOBBY_SETTINGS.settings));

/** The settings' defaults (lobby-settings.ts) but standby's step, and the estimate no setting gives. */
export const LOBBY_DEFAULTS = Object.freeze({
  ...settingsDefaults,
  defaultTurnEstimateMs: 3 * 60_000,
});

export type ResolvedLobbyOptions = Required<Omit<LobbyOptions, 'queueLog'>> & Pick<LobbyOptions, 'queueLog'>;

// A contributor's progress and the queues as the coordinator answers them: shared with the browser.
export type {
  ActiveTurn,
  CircuitProgress,
  ContributorStatus,
  LobbyRefusal,
  LobbyRemoval,
  QueueEntry,
  TurnHeartbeat,
} from '../../core/coordinator-api/lobby-status.ts';

/** What `Lobby.leave` took the contributor out of. */
export type LeaveOutcome =
  | { left: 'waiting'; circuit: string }
  /** The turn is given up (the circuit goes to the next in line); an unfinished upload is dropped. */
  | { left: 'turn'; circuit: string }
  /** A contribution is being verified: it still gets its verdict, after which nothing is queued. */
  | { left: 'after_verdict'; circuit: string }
  /** Not in any queue, turn or verification: nothing to leave. */
  | { left: 'nothing' };

export type LobbyEvent =
  | { type: 'turn_granted'; circuit: string; contributorId: string; at: number; deadline: number }
  | {
      type: 'turn_missed';
      circuit: string;
      contributorId: string;
      at: number;
      deadline: number;
      eligibleAt: number;
      /** Set when the turn ended because its client fell silent: when it was last heard from. */
      silentSince?: number;
      /** Set when the turn ended because its holder's presence stream closed then (and they were not seen since). */
      disconnectedAt?: number;
      /** Set when the turn ended because none of its upload had arrived by then (its grant + uploadStartMs). */
      uploadDue?: number;
      /** Set when the turn ended because its upload made no progress since then. */
      uploadStalledSince?: number;
    }
  /**
   * A turn not taken in time: passed on, a missed turn; its entry back in its place, away and
   * passed on (the first miss there), or at the back, or out of the queue (`removed` follows).
   */
  | {
      type: 'turn_passed_on';
      circuit: string;
      contributorId: string;
      at: number;
      takeBy: number;
      missedTurns: number;
      /** Set when another entry took the turn on standby: their public id (the queue log's). */
      takenOverBy?: string;
    }
  /** A waiting entry offered a turn on standby let it pass to `takenOverBy`, behind it: a missed turn (`skipped`). */
  | {
      type: 'standby_let_pass';
      circuit: string;
      contributorId: string;
      at: number;
      missedTurns: number;
      takenOverBy: string;
    }
  | {
      type: 'entry_removed';
      circuit: string;
      contributorId: string;
      at: number;
      reason: LobbyRemoval['reason'];
      missedTurns?: number;
    };
