/**
 * The lobby: one FIFO queue per circuit, the turn (or verifying submission) of each circuit, and
 * each contributor's progress through the circuits in the configured order.
 *
 * Invariants, held by the schema (see lobby-schema.ts) as well as by the code:
 * - a contributor is in at most one place: waiting in one queue, or holding one turn/verifying
 *   submission; a contributor is never queued for a circuit they have an accepted contribution for;
 * - a circuit has at most one turn or verifying submission: its chain grows one link at a time;
 * - one accepted contribution per contributor per circuit;
 * - every turn that ends without a contribution is a missed turn, counted for good in its circuit
 *   (not taken, lapsed, left, refused or an error the upload caused): a missed turn is not a ban,
 *   but the first miss keeps the entry's place only if the turn was never taken, and then only
 *   after the circuit's next turn; any other sends it to the back of the queue, and after
 *   `maxMissedTurns` it leaves the queue (with a reason in the status); joining again past the
 *   limit waits a cooldown that doubles with each miss, so no account holds up everyone behind it;
 * - presence: who is away or gone, and when a granted or taken turn lapses, are lobby-rules.ts's
 *   pure rules; who may be granted a turn, and what a missed turn leads to, are
 *   core/queue-log/turn-order.ts's, which the audit replays on the public queue log;
 * - every change is appended to the queue log (queue-log-store.ts) in the transaction that makes
 *   it, with a signed receipt for joins, refusals and removals.
 *
 * A turn's states and how it ends are the contribution life cycle's
 * (server/contributions/contribution-lifecycle.ts): every move here goes through its transition,
 * and the outcome a turn ends with is derived from the state it ends in.
 *
 * SQLite is the only state: no field of this class caches lobby state, every change runs in one
 * transaction (change()), so a new Lobby on the same database after a crash continues exactly
 * where it was. The exceptions are the presence observations (lobby-presence.ts), kept in memory.
 * Time comes from the injected Clock only. The class composes the parts: its options, checked
 * (lobby-options.ts), the statements (lobby-statements.ts), the answers (lobby-reader.ts) and the
 * moves (lobby-moves.ts).
 *
 * Nothing here runs by itself: the server calls tick() on an interval (and may call it right
 * after join/record* to grant turns without waiting) and logs the events it returns.
 */
import { CoordinatorError } from '../../core/errors.ts';
import { QUEUE_LOG_FORMAT_VERSION } from '../../core/queue-log/queue-log-entry.ts';
import { standbyDepth, standbyReachedAt } from '../../core/queue-log/turn-order.ts';
import type { Clock } from '../clock.ts';
import { transition, turnOutcome, type SettledVerdict } from '../contributions/contribution-lifecycle.ts';
import { applyMigrations, type Db } from '../store/database.ts';
import { LOBBY_MIGRATIONS } from './lobby-schema.ts';
import { LobbyMoves } from './lobby-moves.ts';
import { resolveOptions } from './lobby-options.ts';
import { LobbyPresence } from './lobby-presence.ts';
import { LobbyReader } from './lobby-reader.ts';
import {
  heartbeatDeadline,
  heartbeatEveryMs,
  keepsCircuit,
  takeBy,
  turnDueAt,
  verdictEvent,
  verdictMiss,
} from './lobby-rules.ts';
import { prepareStatements, turnTimes, type LobbyStatements, type TurnRow } from './lobby-statements.ts';
import { QueueLogStore } from './queue-log-store.ts';
import {
  type ActiveTurn,
  type ContributorStatus,
  type LeaveOutcome,
  type LobbyEvent,
  type LobbyOptions,
  type LobbyRemoval,
  type QueueEntry,
  type ResolvedLobbyOptions,
  type TurnHeartbeat,
} from './lobby-types.ts';

export * from './lobby-types.ts';
export { UPLOAD_PROGRESS_BYTES } from './lobby-rules.ts';

export class Lobby {
  private readonly options: ResolvedLobbyOptions;
  private readonly statements: LobbyStatements;
  /** The public queue log, appended in each change's transaction. */
  readonly queueLog: QueueLogStore;
  /** Who was seen or heard when (an observation, not state: see the file comment). */
  private readonly presence: LobbyPresence;
  private readonly reader: LobbyReader;
  private readonly moves: LobbyMoves;

  constructor(
    private readonly db: Db,
    options: LobbyOptions,
    private readonly clock: Clock,
  ) {
    this.options = resolveOptions(options);
    applyMigrations(db, 'lobby', LOBBY_MIGRATIONS);
    this.statements = prepareStatements(db);
    this.queueLog = new QueueLogStore(db, { ...options.queueLog, ceremonyId: this.options.ceremonyId });
    this.presence = new LobbyPresence(this.options);
    this.reader = new LobbyReader(this.statements, this.options, this.presence, clock);
    this.moves = new LobbyMoves(this.statements, this.queueLog, this.options, this.presence, this.reader);
    const start = clock.now();
    this.presence.restart(
      this.statements.allQueued.all().map((row) => row.contributor_id),
      this.statements.takenTurns.all().map((turn) => turn.contributor_id),
      start,
    );
    const { circuits, presenceMs, takeTurnMs, takePriorityMs, standbyStepMs, turnTimeoutMs, turnSilenceMs } =
      this.options;
    const { disconnectGraceMs } = this.options;
    const { uploadStartMs, uploadStallMs, maxTurnMs, cooldownMs, maxMissedTurns } = this.options;
    this.queueLog.stateRules(
      {
        version: QUEUE_LOG_FORMAT_VERSION,
        circuits: [...circuits],
        presenceMs,
        takeTurnMs,
        ...(takePriorityMs > 0 ? { takePriorityMs } : {}),
        // Absent, the audit reads a step of takePriorityMs: a lobby without a shorter step logs as before it.
        ...(takePriorityMs > 0 && standbyStepMs !== takePriorityMs ? { standbyStepMs } : {}),
        turnTimeoutMs,
        turnSilenceMs,
        disconnectGraceMs,
        uploadStartMs,
        uploadStallMs,
        maxTurnMs,
        cooldownMs,
        maxMissedTurns,
      },
      start,
    );
  }

  /** Runs `change` in one immediate transaction, then brings the public log's file level with it. */
  private change<T>(change: () => T): T {
    try {
      return this.db.transaction(change).immediate();
    } finally {
      this.queueLog.flush();
    }
  }

  /**
   * The contributor's client asked for news (GET /api/me): they are present. An entry that was
   * away is eligible again at once (and the log says they are back): true then, so the caller can
   * grant a circuit that waited for them without waiting for the next tick.
   */
  seen(contributorId: string): boolean {
    const now = this.clock.now();
    this.presence.seen(contributorId, now);
    if (this.statements.queueEntryOf.get(contributorId)?.away !== 1) return false;
    return this.change(() => {
      const waiting = this.statements.queueEntryOf.get(contributorId);
      if (waiting?.away !== 1) return false;
      this.statements.setAway.run(0, contributorId);
      this.moves.log(contributorId, { type: 'back', circuit: waiting.circuit }, now);
      return true;
    });
  }

  /**
   * The contributor's presence stream closed (GET /api/me/presence: their last open one). Unless
   * seen or heard again within disconnectGraceMs, they are gone from then: see the file comment.
   * The server ticks at nextDueAt, so a turn they hold passes on (not taken) or is missed (taken)
   * at the end of the grace.
   */
  streamClosed(contributorId: string): void {
    this.presence.streamClosed(contributorId, this.clock.now());
  }

  /**
   * The holder of a granted turn shows up for it (its first download of the head or inputs): the
   * turn is taken, and from now on only its deadline, or its client falling silent, can end it as
   * missed. A later download is heard as a sign of life. A waiting entry the rules offer the
   * circuit's untaken turn to (standby, turn-order.ts) takes it the same way: the events say so
   * (the grantee's turn passed on, the turn granted to them). Anything else (not their turn)
   * changes nothing: downloads are public.
   */
  takeTurn(contributorId: string, circuit: string): LobbyEvent[] {
    const turn = this.statements.turnOfContributor.get(contributorId);
    if (!turn) return this.takeOnStandby(contributorId, circuit);
    if (turn.circuit !== circuit || turn.state !== 'turn') return [];
    if (turn.taken_at !== null) {
      this.presence.heard(contributorId, this.clock.now());
      return [];
    }
    this.change(() => {
      const live = this.statements.turnOfContributor.get(contributorId);
      if (live && live.taken_at === null && live.state === 'turn' && live.circuit === circuit)
        this.moves.markTaken(live, this.clock.now());
    });
    return [];
  }

  /**
   * takeTurn for a waiting entry. Every signed-in download of a head asks, so the offer is read
   * first (the reader's, as a status shows it): only an entry offered the turn opens a write
   * transaction, which reads it again.
   */
  private takeOnStandby(contributorId: string, circuit: string): LobbyEvent[] {
    if (this.statements.queueEntryOf.get(contributorId)?.circuit !== circuit) return [];
    const held = this.statements.turnOfCircuit.get(circuit);
    if (!held || this.reader.standbyUntil(held, contributorId, this.clock.now()) === undefined) return [];
    return this.change(() => {
      const live = this.statements.turnOfCircuit.get(circuit);
      return (live && this.moves.takeOnStandby(live, contributorId, this.clock.now())) ?? [];
    });
  }

  /**
   * Bytes of the turn holder's upload arrived (`upload`: its id, its offset now, its declared
   * size): a sign of life, the turn taken if it was not yet, and the turn's progress when the
   * offset gained enough since the last progress of the same upload (lobby-rules.ts isProgress).
   * Anything else (not their live turn) changes nothing.
   */
  uploadProgress(contributorId: string, circuit: string, upload: { id: string; offset: number; size?: number }): void {
    const turn = this.statements.turnOfContributor.get(contributorId);
    if (!turn || turn.circuit !== circuit || turn.state !== 'turn') return;
    const now = this.clock.now();
    if (turn.taken_at === null && !this.change(() => this.moves.markTaken(turn, now))) return;
    this.presence.heard(contributorId, now);
    this.presence.uploaded(contributorId, upload, now);
  }

  /**
   * Puts the contributor at the back of the queue of the first circuit (in order) they have no
   * accepted contribution for, among `circuits` when given (their choice, kept until their next
   * join; by default every circuit). Idempotent: a contributor already waiting or holding a turn
   * keeps their place, a contributor who is done stays done; one waiting for a circuit a new
   * choice leaves out goes to the back of the first circuit it keeps. Joining also undoes a
   * `leave` made while a contribution was being verified. Throws circuit.unknown for a circuit
   * the ceremony does not have, request.invalid for an empty choice.
   */
  join(contributorId: string, circuits?: readonly string[], name?: string): ContributorStatus {
    const chosen = circuits === undefined ? undefined : this.reader.inCeremonyOrder(circuits);
    this.seen(contributorId);
    this.change(() => {
      const now = this.clock.now();
      this.queueLog.identify(contributorId, name);
      this.statements.clearLeaving.run(contributorId);
      if (chosen) this.statements.setSelection.run(contributorId, JSON.stringify(chosen));
      else this.statements.clearSelection.run(contributorId);
      const waiting = this.statements.queueEntryOf.get(contributorId);
      if (waiting) {
        if (!keepsCircuit(chosen, waiting.circuit)) {
          // Out of that queue (logged so, whether or not a chosen circuit is left to queue for).
          this.statements.dequeue.run(contributorId);
          this.moves.log(contributorId, { type: 'left', circuit: waiting.circuit, from: 'waiting' }, now);
          this.moves.enqueueForNextCircuit(contributorId, now, 'choice');
        }
        return;
      }
      if (this.statements.turnOfContributor.get(contributorId)) return;
      // Joining again after a removal is the contributor saying they are back; their missed turns still count.
      this.statements.clearRemoval.run(contributorId);
      this.moves.enqueueForNextCircuit(contributorId, now, 'join');
    });
    return this.status(contributorId);
  }

  /**
   * The contributor leaves the lobby (`POST /api/me/leave`, a terminal client's Ctrl-C): a waiting
   * entry is dropped; a turn not yet uploaded is given up (the circuit goes to the next in line);
   * a contribution being verified still gets its verdict, after which they are queued nowhere.
   * Their accepted contributions stay. Idempotent: leaving when not in the lobby changes nothing.
   */
  leave(contributorId: string): LeaveOutcome {
    return this.change((): LeaveOutcome => this.moves.leave(contributorId, this.clock.now()));
  }

  status(contributorId: string): ContributorStatus {
    return this.db.transaction(() => this.reader.status(contributorId))();
  }

  /** Contributors waiting, per configured circuit (0 for an empty queue). */
  queueLengths(): Record<string, number> {
    return this.reader.queueLengths();
  }

  /** The longest a turn can last, heartbeats included (maxTurnMs). */
  get longestTurnMs(): number {
    return this.options.maxTurnMs;
  }

  activeTurns(): ActiveTurn[] {
    return this.reader.activeTurns();
  }

  /**
   * The next moment at which tick() has something to do because time passed: a turn not taken by
   * its time, a deadline, a silence period, an upload's time to start or stall, or a closed
   * stream's grace running out, a cooldown ending; undefined if none. The server ticks then, so a
   * lapse costs the circuit its rule's time and not up to a tick more.
   */
  nextDueAt(): number | undefined {
    let due = Infinity;
    for (const turn of this.statements.allTurns.all()) {
      if (turn.state !== 'turn') continue;
      const times = turnTimes(turn);
      const who = turn.contributor_id;
      const seen = {
        heard: this.presence.lastHeard(who, times),
        progress: this.presence.progress(who),
        closedAt: this.presence.closedAt(who),
      };
      due = Math.min(due, turnDueAt(times, seen, this.options), this.nextStandbyAt(turn));
    }
    const cooling = this.statements.nextEligibleAt.get(this.clock.now())?.at;
    if (cooling !== null && cooling !== undefined) due = Math.min(due, cooling);
    return Number.isFinite(due) ? due : undefined;
  }

  /**
   * When one more entry is offered an untaken turn on standby: a status (and a held poll) changes
   * then, so the server ticks; Infinity when none will be.
   */
  private nextStandbyAt(turn: TurnRow): number {
    if (this.options.takePriorityMs <= 0 || turn.taken_at !== null) return Infinity;
    const depth = standbyDepth(turn.started_at, this.clock.now(), this.options);
    const at = standbyReachedAt(turn.started_at, depth + 1, this.options);
    return at <= Math.min(takeBy(turnTimes(turn), this.options), turn.deadline) ? at : Infinity;
  }

  /** How often a turn's client should send a heartbeat: several times within the silence period. */
  get heartbeatEveryMs(): number {
    return heartbeatEveryMs(this.options);
  }

  /**
   * (1) Ends as missed every taken turn whose deadline has passed (deadline < now), whose client
   * has not been heard from for turnSilenceMs, or whose upload did not start within uploadStartMs
   * of its grant or stalled for uploadStallMs: the circuit is freed and the contributor goes to
   * the back of the same queue after the cooldown (or out of it after maxMissedTurns misses).
   * (2) Passes on, also as missed, every turn not taken by its time (startedAt + takeTurnMs < now),
   * or whose holder is gone since their presence stream closed: its entry goes back to its place,
   * away and passed on, the first time, else as (1). (3) While the ceremony is open, gives each
   * free circuit to the first of its queue the rules put first (turn-order.ts), marking away, and
   * logging, the entries passed over because their contributor is gone.
   */
  tick(): LobbyEvent[] {
    return this.change(() => {
      const now = this.clock.now();
      const events = this.moves.endLapsedTurns(now);
      if (!this.options.isOpen()) return events;
      for (const circuit of this.options.circuits) {
        if (this.statements.turnOfCircuit.get(circuit)) continue;
        const next = this.moves.nextInLine(circuit, now);
        if (next) events.push(this.moves.grant(circuit, next, now));
      }
      return events;
    });
  }

  /**
   * The coordinator takes a contributor's entry out of the lobby: a waiting entry, or a turn not
   * yet uploaded (the circuit goes to the next in line). The contributor sees the reason and may
   * join again. Throws lobby.not_queued when there is no such entry (or it is being verified).
   */
  removeEntry(contributorId: string, message = 'the coordinator removed your entry from the queue'): LobbyRemoval {
    return this.change(() => this.moves.removeEntry(contributorId, message, this.clock.now()));
  }

  /** Waiting entries in queue order, per circuit, at most `limit` per circuit (the console's list). */
  queueEntries(limit = 500): QueueEntry[] {
    return this.reader.queueEntries(limit);
  }

  /**
   * Extends a taken live turn: deadline = max(deadline, now + heartbeatExtension), never past
   * startedAt + maxTurn. A heartbeat does not take a turn (a download or an upload does): an account
   * that only beats would otherwise hold each grant until UPLOAD_START_MS instead of TAKE_TURN_MS.
   * On a turn not taken yet it answers the turn's deadline unchanged.
   */
  heartbeat(contributorId: string, circuit: string): TurnHeartbeat {
    return this.change(() => {
      const now = this.clock.now();
      const turn = this.reader.requireLiveTurn(contributorId, circuit);
      if (turn.taken_at === null) return { deadline: turn.deadline, heartbeatEveryMs: this.heartbeatEveryMs };
      const deadline = heartbeatDeadline(turnTimes(turn), now, this.options);
      if (deadline !== turn.deadline) this.statements.setDeadline.run(deadline, circuit);
      return { deadline, heartbeatEveryMs: this.heartbeatEveryMs };
    });
  }

  /**
   * Refuses unless the contributor holds the live turn (granted, deadline not passed, taken or
   * still in its time to be taken, nothing uploaded yet) for this circuit. Throws circuit.unknown,
   * lobby.already_contributed or
   * lobby.not_your_turn with a message saying where the contributor actually is.
   */
  requireTurn(contributorId: string, circuit: string): void {
    this.db.transaction(() => this.reader.requireLiveTurn(contributorId, circuit))();
  }

  /**
   * The upload of the turn's contribution is complete: the turn becomes a verifying submission
   * (no deadline any more; the circuit stays busy until record*). Requires the live turn, like
   * requireTurn; repeating it with the same contributionId is a no-op.
   */
  markSubmitted(contributorId: string, circuit: string, contributionId: string): void {
    this.change(() => {
      const current = this.statements.turnOfContribution.get(contributionId);
      if (current && current.contributor_id === contributorId && current.circuit === circuit) return;
      if (current || this.statements.historyOfContribution.get(contributionId)) {
        throw new CoordinatorError('request.invalid', `contribution id ${contributionId} is already used`);
      }
      const turn = this.reader.requireLiveTurn(contributorId, circuit);
      // An upload is the surest sign of someone there (a client that skipped the download and heartbeat).
      this.moves.markTaken(turn, this.clock.now());
      // 'verifying' by the life cycle's table, which refuses the move from anything but a turn.
      this.statements.setVerifying.run(transition(turn.state, 'uploaded') as TurnRow['state'], contributionId, circuit);
    });
  }

  /**
   * Records the verdict on a verifying submission (the ceremony service calls this in the same
   * transaction that records it on the contribution row). The circuit is freed. Accepted: the
   * contributor is queued for their next circuit (at the back), or done. Refused, error or
   * discarded: back of the same queue (or of the first circuit they still need among those
   * chosen, when a join meanwhile left that one out); a refusal or error is shown in their status.
   * A refusal, and an error the upload caused (`errorCausedByUpload`: the verifier failed on what
   * was uploaded, not the coordinator on its own files), is a missed turn: at the limit the entry
   * leaves the queue. Returns false, changing nothing, if a verdict was already recorded for this
   * contribution (outcomes may be delivered twice).
   */
  recordVerdict(
    contributionId: string,
    verdict: SettledVerdict,
    { errorCausedByUpload = false }: { errorCausedByUpload?: boolean } = {},
  ): boolean {
    return this.change(() => {
      const turn = this.reader.verifyingSubmission(contributionId);
      if (!turn) return false;
      const now = this.clock.now();
      const who = turn.contributor_id;
      const outcome = turnOutcome(transition(turn.state, verdictEvent(verdict.status)));
      this.moves.logEndedTurn(turn, outcome, now);
      // The contributor left while this was being verified: the verdict is theirs, no new place is.
      const stays = this.statements.clearLeaving.run(who).changes === 0;
      // Queued again right after a verdict: they are there (their page or terminal just uploaded).
      if (stays) this.presence.requeued(who, now);
      if (verdict.status === 'accepted') {
        this.statements.recordAccepted.run(
          who,
          turn.circuit,
          contributionId,
          verdict.chainIndex,
          verdict.contributionHash,
          now,
        );
        this.moves.log(
          who,
          {
            type: 'accepted',
            circuit: turn.circuit,
            index: verdict.chainIndex,
            transcriptHash: verdict.transcriptHash,
          },
          now,
        );
        if (stays) this.moves.enqueueForNextCircuit(who, now, 'accepted');
        return true;
      }
      this.moves.refused(turn, verdict, { stays, counted: verdictMiss(verdict.status, errorCausedByUpload) }, now);
      return true;
    });
  }
}
