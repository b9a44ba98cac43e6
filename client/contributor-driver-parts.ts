/**
 * What the contributor driver (contributor-driver.ts) is given and tells: the requests it makes,
 * its clock, the turn it hands over, the hooks each side draws with, and how a run fails.
 */
import type { CeremonyView, ContributionView, MeView, TurnHeartbeat } from '../core/coordinator-api/api-types.ts';
import type { ApiClient, ApiError } from './api-client.ts';
import type { PresenceHolder } from './presence-holder.ts';

/** How the run ended without every circuit accepted: the code and message the terminal prints. */
export class RunFailure extends Error {
  override readonly name = 'RunFailure';

  constructor(
    readonly code: string,
    message: string,
    /** Leave the lobby on the way out (the run will not come back for its place). */
    readonly leave = false,
  ) {
    super(message);
  }
}

/**
 * A `GET /api/me` the coordinator may hold (at most two per contributor, so the driver holds one):
 * `verdictWaitMs` until a contribution's verdict is in, `turnWaitMs` until the waiting contributor's
 * status changes (a grant, a standby offer, a new place in line, a verdict); `signal` gives it up.
 */
export interface HeldPoll {
  verdictWaitMs?: number;
  turnWaitMs?: number;
  signal?: AbortSignal;
}

/** The requests the protocol makes, so a test can answer them without a coordinator. */
export interface DriverApi {
  /**
   * `resend`: sent again while the coordinator does not answer (the terminal), or not (the page polls
   * on). `hold`: the coordinator may hold the answer (HeldPoll); without it, answered at once.
   */
  me(resend: boolean, hold?: HeldPoll): Promise<MeView>;
  /** Undefined: every circuit (no choice sent). */
  join(circuits: readonly string[] | undefined): Promise<MeView>;
  leave(): Promise<unknown>;
  heartbeat(circuit: string): Promise<TurnHeartbeat>;
  ceremony(): Promise<CeremonyView>;
  /**
   * Takes the turn, or the standby offer, on `circuit` without moving its bytes: a HEAD of the head's
   * inputs at their moving URL, which the coordinator counts as the download that takes a turn.
   * Optional: without it, or refused, or on a coordinator that takes a turn only at the inputs' own
   * URL, the turn's first download takes it.
   */
  take?(circuit: string, signal: AbortSignal): Promise<void>;
}

export function coordinatorApi(client: Pick<ApiClient, 'get' | 'request' | 'fetch'>): DriverApi {
  return {
    me: (resend, hold) => {
      const query = new URLSearchParams();
      if (hold?.verdictWaitMs) query.set('verdictWaitMs', String(hold.verdictWaitMs));
      if (hold?.turnWaitMs) query.set('turnWaitMs', String(hold.turnWaitMs));
      const route = query.size > 0 ? `/api/me?${query.toString()}` : '/api/me';
      const signal = hold?.signal;
      if (resend && !signal) return client.get<MeView>(route);
      return client.get<MeView>(route, { ...(resend ? {} : { resend: false }), ...(signal ? { signal } : {}) });
    },
    join: (circuits) => client.request<MeView>('POST', '/api/me/join', circuits ? { circuits: [...circuits] } : {}),
    leave: () => client.request('POST', '/api/me/leave'),
    heartbeat: (circuit) =>
      client.request<TurnHeartbeat>('POST', `/api/circuits/${encodeURIComponent(circuit)}/heartbeat`),
    ceremony: () => client.get<CeremonyView>('/api/ceremony'),
    take: async (circuit, signal) => {
      const route = `/api/circuits/${encodeURIComponent(circuit)}/contribution-inputs`;
      // Its redirect not followed: the moving URL takes the turn, and the inputs' own URL would have a
      // coordinator cut them for a client that may not use them (a whole-key turn).
      const answer = await client.fetch('HEAD', route, { resend: false, signal, follow: false });
      await answer.body?.cancel();
    },
  };
}

export interface DriverClock {
  now(): number;
  /** Calls `fn` after `ms`; the function returned cancels it. */
  after(ms: number, fn: () => void): () => void;
}

export const REAL_CLOCK: DriverClock = {
  now: () => Date.now(),
  after: (ms, fn) => {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};

/** One turn handed to the caller: move the bytes from the head to the coordinator. */
export interface DriverTurn {
  circuit: string;
  ceremony: CeremonyView;
  headIndex: number;
  headFileHash: string | null;
  /** Given up (stopped, the turn lost): stop moving bytes as soon as possible. */
  signal: AbortSignal;
  /** The contribution hash, told once computed, before the upload (its verdict is compared with it). */
  onHash(hash: string): void;
  /**
   * A standby turn: granted to someone ahead and not taken yet, offered to this contributor too
   * (`standbyUntil`); the first download of the head or its inputs takes it, unless another entry
   * took it first.
   */
  standby: boolean;
  /**
   * To be called once the first download of the head or its inputs is answered, and awaited before
   * computing: on a standby turn it asks the coordinator whether that download took the turn, and
   * if not (another entry was first) gives the turn up (rejects with the abort). At once otherwise.
   */
  taken(): Promise<void>;
}

/** How a turn that ended without an upload is counted. */
export interface TurnFailure {
  /** lost: the coordinator took the turn back; interrupted: the link or the coordinator broke; refused: the upload. */
  kind: 'lost' | 'interrupted' | 'refused';
  /** Interruptions in a row (reset by an upload). */
  inARow: number;
  /** Refusals of this circuit so far (verdicts and uploads). */
  attempts: number;
  /** When the turn may be taken again (the clock's time). */
  retryAt: number;
}

/** What the caller is told; any hook may throw a RunFailure to end the run. */
export interface DriverView {
  /** Each answer of `GET /api/me` or a join, before the driver acts on it. */
  answered?(me: MeView): void;
  /** A poll that got no answer (the page polls on without `steady`). */
  unanswered?(error: unknown): void;
  /** A verdict that arrived since the driver started; `attempts`: refusals of its circuit so far. */
  verdict?(contribution: ContributionView, attempts: number): void;
  /** `standby`: a turn granted ahead and not taken, offered to this contributor too (DriverTurn). */
  turnStarting?(circuit: string, standby: boolean): void;
  /** A standby turn someone else took first: back to waiting, no failure (then turnDropped). */
  standbyTakenElsewhere?(circuit: string): void;
  /** `answerLost`: the upload's last answer was lost, but the coordinator has it. */
  uploaded?(circuit: string, answerLost: boolean): void;
  turnFailed?(circuit: string, error: ApiError, failure: TurnFailure): void;
  /** The turn's work was stopped: the coordinator took the turn back, or the driver stopped. */
  turnDropped?(circuit: string): void;
  heartbeat?(circuit: string, answer: TurnHeartbeat): void;
  /** A line about the run itself (a busy coordinator, a new sign-in, a turn given up). */
  note?(line: string): void;
}

export interface DriverOptions {
  api: DriverApi;
  /** Runs one turn; rejects with the coordinator's refusal (ApiError) or the abort. */
  turn(turn: DriverTurn): Promise<void>;
  view?: DriverView;
  clock?: DriverClock;
  /** Held while the run lasts (`holdPresence: 'run'`) or while in line (default). */
  presence?: PresenceHolder;
  holdPresence?: 'run' | 'in-line';
  /**
   * The terminal: join at the start with these circuits (`everyCircuit`: send no choice), give up a
   * turn on any other circuit, and end once they are all accepted. Without it (the page), the
   * driver joins when `join()` is called and runs until `stop()`.
   */
  joinAtStart?: { circuits: readonly string[]; everyCircuit: boolean };
  /**
   * The terminal: a request the run cannot do without is asked again through a busy coordinator,
   * an ended session is signed in again; what it cannot get past ends the run. Without it (the
   * page), a poll with no answer is told to `unanswered` and polled again at the usual pace.
   */
  steady?: { signInAgain(): Promise<void> };
  /** The page polls during a turn (and stops one the coordinator took back); the terminal waits for the turn to end. */
  pollDuringTurns: boolean;
  /**
   * The terminal: while a contribution is verified and no circuit waits in line, each poll asks the
   * coordinator to hold its answer until the verdict (`GET /api/me?verdictWaitMs`), so the verdict is
   * known when it is recorded rather than at the next poll. (With a circuit waiting, a held poll would
   * hide a turn granted there meanwhile.) An older coordinator answers at once, paced as before.
   */
  holdPollsForVerdicts?: boolean;
  /** The terminal: a heartbeat or an upload refused as not this turn is checked against `GET /api/me` first. */
  confirmLostTurns: boolean;
  /** A turn that ended without an upload is taken again after this pause (if still this contributor's). */
  turnRetryPauseMs: number;
  /** A failed heartbeat is sent again after this (the page); default: at the next beat. */
  heartbeatRetryMs?: number;
  /** Settles when the caller's turn is set up: no turn is taken before (its set-up would starve the heartbeats). */
  ready?: Promise<void>;
}

/** Whether `me` is in line (or was: contributions made); an entry that left the queue waits for a new join. */
export function isJoined(me: MeView | null): boolean {
  if (!me || me.status.removed) return false;
  return me.status.circuits.some((c) => c.state !== 'pending') || me.contributions.length > 0;
}
