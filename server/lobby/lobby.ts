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
 * - presence: an entry whose contributor has not been seen (a poll, a join) for `presenceMs` is
 *   away: it keeps its place but is passed over; a granted turn not taken (a download, a
 *   heartbeat, an upload) within `takeTurnMs` passes on; a taken turn whose client falls silent
 *   (nothing from it for `turnSilenceMs`), none of whose upload arrived within `uploadStartMs` of
 *   its grant, or whose upload stalls for `uploadStallMs`, is missed then, not at its deadline:
 *   heartbeats alone do not hold a turn. A client that holds the presence
 *   stream and closes it (a closed tab, a killed terminal) is gone `disconnectGraceMs` later unless
 *   seen or heard again: its entry is away, a turn granted to it and not taken passes on, and a
 *   taken turn is missed, without waiting for `presenceMs`, `takeTurnMs` or `turnSilenceMs`. Who
 *   may be granted a turn, and what a missed turn leads to, are core/queue-log/turn-order.ts's
 *   pure rules, which the audit replays on the public queue log;
 * - every change is appended to the queue log (queue-log-store.ts) in the transaction that makes
 *   it, with a signed receipt for joins, refusals and removals.
 *
 * A turn's states and how it ends are the contribution life cycle's
 * (server/contributions/contribution-lifecycle.ts): every move here goes through its transition,
 * and the outcome a turn ends with is derived from the state it ends in.
 *
 * SQLite is the only state: no field of this class caches lobby state, every change runs in one
 * transaction, so a new Lobby on the same database after a crash continues exactly where it was.
 * The exceptions are when each waiting contributor was last seen, when each turn's client was
 * last heard from, when a presence stream closed, and each turn's upload progress, observations
 * rather than state: kept in memory, and taken as the start for every entry and taken turn after a
 * restart (with no stream closed, every upload started), so a restart makes nobody away, silent,
 * gone or stalled. Time comes from the
 * injected Clock only.
 *
 * Nothing here runs by itself: the server calls tick() on an interval (and may call it right
 * after join/record* to grant turns without waiting) and logs the events it returns.
 */
import { CoordinatorError, errorCodeOr } from '../../core/errors.ts';
import { QUEUE_LOG_FORMAT_VERSION, type JoinCause } from '../../core/queue-log/queue-log-entry.ts';
import {
  afterMissedTurn,
  eligibleOnJoin,
  firstInLine,
  isAway,
  type LapseConsequence,
} from '../../core/queue-log/turn-order.ts';
import type { Clock } from '../clock.ts';
import {
  isShownRefusal,
  transition,
  turnOutcome,
  type LifecycleEvent,
  type SettledVerdict,
  type TurnOutcome,
} from '../contributions/contribution-lifecycle.ts';
import { applyMigrations, type Db } from '../store/database.ts';
import { estimateWait, TURN_SAMPLES } from './estimate-wait.ts';
import { LOBBY_MIGRATIONS } from './lobby-schema.ts';
import { QueueLogStore, type ProposedStep } from './queue-log-store.ts';
import {
  LOBBY_DEFAULTS,
  type ActiveTurn,
  type CircuitProgress,
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

/** Clients are asked to beat every quarter of the silence period, within these bounds. */
const HEARTBEAT_EVERY_MAX_MS = 30_000;
const HEARTBEAT_EVERY_MIN_MS = 500;
/** An upload progresses when it gains this much (or the rest of it): a trickle of bytes does not hold a turn. */
export const UPLOAD_PROGRESS_BYTES = 64 * 1024;

interface QueueRow {
  seq: number;
  contributor_id: string;
  circuit: string;
  enqueued_at: number;
  eligible_at: number;
  away: 0 | 1;
  passed_on: 0 | 1;
}

interface TurnRow {
  circuit: string;
  contributor_id: string;
  /** The two states of the life cycle a turn is held in (lobby_turns' CHECK). */
  state: 'turn' | 'verifying';
  started_at: number;
  deadline: number;
  contribution_id: string | null;
  taken_at: number | null;
  queue_seq: number | null;
  queue_enqueued_at: number | null;
}

interface AcceptedRow {
  circuit: string;
  contribution_id: string;
  chain_index: number;
  contribution_hash: string;
}

interface RemovalRow {
  circuit: string;
  reason: LobbyRemoval['reason'];
  message: string;
  at: number;
}

/** Why a taken turn ended before its deadline (each time, ms since the epoch; see LobbyEvent turn_missed). */
interface LapseCause {
  silentSince?: number;
  disconnectedAt?: number;
  uploadDue?: number;
  uploadStalledSince?: number;
}

interface RefusalRow {
  circuit: string;
  code: string;
  message: string;
  at: number;
}

export class Lobby {
  private readonly options: ResolvedLobbyOptions;
  private readonly statements: LobbyStatements;
  /** The public queue log, appended in each change's transaction. */
  readonly queueLog: QueueLogStore;
  /** When each contributor was last seen (see the file comment: an observation, not state). */
  private readonly seenAt = new Map<string, number>();
  /** When the client of each taken turn was last heard from, by contributor (an observation too). */
  private readonly heardAt = new Map<string, number>();
  /** When each contributor's presence stream closed, if they have not been seen since (an observation too). */
  private readonly disconnectedAt = new Map<string, number>();
  /** Each taken turn's upload: its id, its offset at its last progress, and when (an observation too). */
  private readonly progressOf = new Map<string, { uploadId: string; offset: number; at: number }>();

  constructor(
    private readonly db: Db,
    options: LobbyOptions,
    private readonly clock: Clock,
  ) {
    this.options = resolveOptions(options);
    applyMigrations(db, 'lobby', LOBBY_MIGRATIONS);
    this.statements = prepareStatements(db);
    this.queueLog = new QueueLogStore(db, { ...options.queueLog, ceremonyId: this.options.ceremonyId });
    const start = clock.now();
    for (const row of this.statements.allQueued.all()) this.seenAt.set(row.contributor_id, start);
    for (const turn of this.statements.takenTurns.all()) {
      this.heardAt.set(turn.contributor_id, start);
      this.progressOf.set(turn.contributor_id, { uploadId: '', offset: 0, at: start });
    }
    const { circuits, presenceMs, takeTurnMs, turnTimeoutMs, turnSilenceMs, disconnectGraceMs } = this.options;
    const { uploadStartMs, uploadStallMs, maxTurnMs, cooldownMs, maxMissedTurns } = this.options;
    this.queueLog.stateRules(
      {
        version: QUEUE_LOG_FORMAT_VERSION,
        circuits: [...circuits],
        presenceMs,
        takeTurnMs,
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

  private log(contributorId: string, step: ProposedStep, now: number): void {
    this.queueLog.append(contributorId, step, now);
  }

  /**
   * The contributor's client asked for news (GET /api/me): they are present. An entry that was
   * away is eligible again at once (and the log says they are back): true then, so the caller can
   * grant a circuit that waited for them without waiting for the next tick.
   */
  seen(contributorId: string): boolean {
    const now = this.clock.now();
    this.seenAt.set(contributorId, now);
    this.disconnectedAt.delete(contributorId);
    if (this.statements.queueEntryOf.get(contributorId)?.away !== 1) return false;
    return this.change(() => {
      const waiting = this.statements.queueEntryOf.get(contributorId);
      if (waiting?.away !== 1) return false;
      this.statements.setAway.run(0, contributorId);
      this.log(contributorId, { type: 'back', circuit: waiting.circuit }, now);
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
    if (this.options.disconnectGraceMs > 0) this.disconnectedAt.set(contributorId, this.clock.now());
  }

  /** When the contributor's presence stream closed, if their grace ran out by `now` and they were not seen since. */
  private goneSince(contributorId: string, now: number): number | undefined {
    const closed = this.disconnectedAt.get(contributorId);
    return closed !== undefined && now - closed > this.options.disconnectGraceMs ? closed : undefined;
  }

  /** Whether a waiting contributor is passed over at `now`: unseen for presenceMs, or gone since its stream closed. */
  private isGone(contributorId: string, now: number): boolean {
    return (
      isAway(this.seenAt.get(contributorId) ?? now, now, this.options.presenceMs) ||
      this.goneSince(contributorId, now) !== undefined
    );
  }

  /**
   * The holder of a granted turn shows up for it (its first download of the head, or a
   * heartbeat): the turn is taken, and from now on only its deadline, or its client falling
   * silent, can end it as missed. A later download is heard as a sign of life. Anything else (not
   * their turn) changes nothing: downloads are public.
   */
  takeTurn(contributorId: string, circuit: string): void {
    const turn = this.statements.turnOfContributor.get(contributorId);
    if (!turn || turn.circuit !== circuit || turn.state !== 'turn') return;
    if (turn.taken_at !== null) {
      this.heard(contributorId, this.clock.now());
      return;
    }
    this.change(() => {
      const live = this.statements.turnOfContributor.get(contributorId);
      if (live && live.taken_at === null && live.state === 'turn' && live.circuit === circuit)
        this.markTaken(live, this.clock.now());
    });
  }

  /**
   * Bytes of the turn holder's upload arrived (`upload`: its id, its offset now, its declared
   * size): a sign of life, the turn taken if it was not yet, and the turn's progress when the
   * offset gained progressStep (or reached the end) since the last progress of the same upload (a
   * new upload starts from 0). Anything else (not their live turn) changes nothing.
   */
  uploadProgress(contributorId: string, circuit: string, upload: { id: string; offset: number; size?: number }): void {
    const turn = this.statements.turnOfContributor.get(contributorId);
    if (!turn || turn.circuit !== circuit || turn.state !== 'turn') return;
    const now = this.clock.now();
    if (turn.taken_at === null && !this.change(() => this.markTaken(turn, now))) return;
    this.heard(contributorId, now);
    const last = this.progressOf.get(contributorId);
    const from = last?.uploadId === upload.id ? last.offset : 0;
    const rest = upload.size === undefined ? Infinity : upload.size - from;
    if (upload.offset - from >= Math.max(1, Math.min(this.progressStep(upload.size), rest)))
      this.progressOf.set(contributorId, { uploadId: upload.id, offset: upload.offset, at: now });
  }

  /**
   * The bytes an upload of `size` must gain per UPLOAD_STALL_MS to count as progress: 64 KiB, or the
   * pace that sends the whole upload within MAX_TURN_MS if that is more. A trickle of 64 KiB a period
   * (550 B/s) would otherwise hold a turn to MAX_TURN_MS; at this pace the turn's time is the
   * upload's own (39 kB/s for a 141 MB key, a 60-min turn and a 2-min period: any home link).
   */
  private progressStep(size: number | undefined): number {
    const { uploadStallMs, maxTurnMs } = this.options;
    if (size === undefined || uploadStallMs <= 0) return UPLOAD_PROGRESS_BYTES;
    return Math.max(UPLOAD_PROGRESS_BYTES, Math.ceil((size * uploadStallMs) / maxTurnMs));
  }

  /** Records the turn as taken, unless its time to be taken has passed (then it is passing on). */
  private markTaken(turn: TurnRow, now: number): boolean {
    if (turn.taken_at !== null) return true;
    if (now > this.takeBy(turn)) return false;
    this.statements.setTaken.run(now, turn.circuit);
    turn.taken_at = now;
    this.heard(turn.contributor_id, now);
    this.log(turn.contributor_id, { type: 'taken', circuit: turn.circuit }, now);
    return true;
  }

  /** A turn's client was heard from (a download, a heartbeat, an upload request): it is there. */
  private heard(contributorId: string, now: number): void {
    this.heardAt.set(contributorId, now);
    this.disconnectedAt.delete(contributorId);
  }

  /** When a taken turn's client was last heard from (at the latest, when it took the turn). */
  private lastHeard(turn: TurnRow): number {
    return this.heardAt.get(turn.contributor_id) ?? turn.taken_at ?? turn.started_at;
  }

  private takeBy(turn: TurnRow): number {
    return turn.started_at + this.options.takeTurnMs;
  }

  /**
   * Puts the contributor at the back of `circuit`'s queue, and logs it with their place in it;
   * eligible at `eligibleAt`, by default when the rules let a join be (turn-order.ts eligibleOnJoin).
   */
  private enqueue(contributorId: string, circuit: string, now: number, via: JoinCause, eligibleAt?: number): void {
    eligibleAt ??= eligibleOnJoin(this.missedIn(contributorId, circuit), now, this.options);
    const { lastInsertRowid } = this.statements.enqueue.run(contributorId, circuit, now, eligibleAt);
    const position = this.statements.positionOf.get(circuit, Number(lastInsertRowid))!.ahead + 1;
    this.log(
      contributorId,
      {
        type: 'join',
        circuit,
        position,
        via,
        ...(eligibleAt > now ? { eligibleAt: new Date(eligibleAt).toISOString() } : {}),
      },
      now,
    );
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
    const chosen = circuits === undefined ? undefined : this.inCeremonyOrder(circuits);
    this.seen(contributorId);
    this.change(() => {
      const now = this.clock.now();
      this.queueLog.identify(contributorId, name);
      this.statements.clearLeaving.run(contributorId);
      if (chosen) this.statements.setSelection.run(contributorId, JSON.stringify(chosen));
      else this.statements.clearSelection.run(contributorId);
      const waiting = this.statements.queueEntryOf.get(contributorId);
      if (waiting) {
        if (chosen && !chosen.includes(waiting.circuit)) {
          // Out of that queue (logged so, whether or not a chosen circuit is left to queue for).
          this.statements.dequeue.run(contributorId);
          this.log(contributorId, { type: 'left', circuit: waiting.circuit, from: 'waiting' }, now);
          this.enqueueForNextCircuit(contributorId, now, 'choice');
        }
        return;
      }
      if (this.statements.turnOfContributor.get(contributorId)) return;
      // Joining again after a removal is the contributor saying they are back; their missed turns still count.
      this.statements.clearRemoval.run(contributorId);
      this.enqueueForNextCircuit(contributorId, now, 'join');
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
    return this.change((): LeaveOutcome => {
      const now = this.clock.now();
      const waiting = this.statements.queueEntryOf.get(contributorId);
      if (waiting) {
        this.statements.dequeue.run(contributorId);
        this.log(contributorId, { type: 'left', circuit: waiting.circuit, from: 'waiting' }, now);
        return { left: 'waiting', circuit: waiting.circuit };
      }
      const turn = this.statements.turnOfContributor.get(contributorId);
      if (turn?.state === 'turn') {
        // A turn given up is a missed turn: leaving and joining again does not undo it.
        this.endTurn(turn, 'left', now);
        const missedTurns = this.countMiss(turn);
        this.log(contributorId, { type: 'left', circuit: turn.circuit, from: 'turn', missedTurns }, now);
        return { left: 'turn', circuit: turn.circuit };
      }
      if (turn?.state === 'verifying') {
        // Logged once: leaving again while the verdict is awaited changes nothing.
        if (!this.statements.leavingOf.get(contributorId))
          this.log(contributorId, { type: 'left', circuit: turn.circuit, from: 'after_verdict' }, now);
        this.statements.markLeaving.run(contributorId, now);
        return { left: 'after_verdict', circuit: turn.circuit };
      }
      return { left: 'nothing' };
    });
  }

  status(contributorId: string): ContributorStatus {
    return this.db.transaction(() => this.readStatus(contributorId))();
  }

  /** Contributors waiting, per configured circuit (0 for an empty queue). */
  queueLengths(): Record<string, number> {
    const lengths: Record<string, number> = Object.fromEntries(this.options.circuits.map((circuit) => [circuit, 0]));
    for (const { circuit, waiting } of this.statements.queueLengths.all()) {
      if (circuit in lengths) lengths[circuit] = waiting;
    }
    return lengths;
  }

  /** The longest a turn can last, heartbeats included (maxTurnMs). */
  get longestTurnMs(): number {
    return this.options.maxTurnMs;
  }

  activeTurns(): ActiveTurn[] {
    return this.statements.allTurns
      .all()
      .map((row) =>
        row.state === 'turn'
          ? { circuit: row.circuit, contributorId: row.contributor_id, state: 'turn', deadline: row.deadline }
          : { circuit: row.circuit, contributorId: row.contributor_id, state: 'verifying' },
      );
  }

  /**
   * The next moment at which tick() has something to do because time passed: a turn not taken by
   * its time, a deadline, a silence period, an upload's time to start or stall, or a closed
   * stream's grace running out, a cooldown ending; undefined if none. The server ticks then, so a
   * lapse costs the circuit its rule's time and not up to a tick more.
   */
  nextDueAt(): number | undefined {
    const { takeTurnMs, turnSilenceMs } = this.options;
    let due = Infinity;
    for (const turn of this.statements.allTurns.all()) {
      if (turn.state !== 'turn') continue;
      // tick() ends a turn once its time is strictly past: the millisecond after.
      due = Math.min(due, turn.deadline + 1);
      if (turn.taken_at === null && takeTurnMs > 0) due = Math.min(due, this.takeBy(turn) + 1);
      if (turn.taken_at !== null && turnSilenceMs > 0) due = Math.min(due, this.lastHeard(turn) + turnSilenceMs + 1);
      const noProgress = turn.taken_at === null ? undefined : this.uploadDueAt(turn);
      if (noProgress !== undefined) due = Math.min(due, noProgress + 1);
      const closed = this.disconnectedAt.get(turn.contributor_id);
      if (closed !== undefined) due = Math.min(due, closed + this.options.disconnectGraceMs + 1);
    }
    const cooling = this.statements.nextEligibleAt.get(this.clock.now())?.at;
    if (cooling !== null && cooling !== undefined) due = Math.min(due, cooling);
    return Number.isFinite(due) ? due : undefined;
  }

  /**
   * When a taken turn lapses for want of upload progress: its grant + uploadStartMs while none of
   * its upload has arrived, its last progress + uploadStallMs after; undefined when the rule is off.
   */
  private uploadDueAt(turn: TurnRow): number | undefined {
    const { uploadStartMs, uploadStallMs } = this.options;
    const progress = this.progressOf.get(turn.contributor_id);
    if (progress === undefined) return uploadStartMs > 0 ? turn.started_at + uploadStartMs : undefined;
    return uploadStallMs > 0 ? progress.at + uploadStallMs : undefined;
  }

  /** How often a turn's client should send a heartbeat: several times within the silence period. */
  get heartbeatEveryMs(): number {
    const { turnSilenceMs, heartbeatExtensionMs } = this.options;
    const within = turnSilenceMs > 0 ? Math.min(turnSilenceMs, heartbeatExtensionMs) : heartbeatExtensionMs;
    return Math.min(HEARTBEAT_EVERY_MAX_MS, Math.max(HEARTBEAT_EVERY_MIN_MS, Math.floor(within / 4)));
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
      const events: LobbyEvent[] = [];
      for (const turn of this.statements.expiredTurns.all(now)) {
        if (turn.taken_at === null) continue; // passed on below
        events.push(...this.missTurn(turn, now));
      }
      for (const turn of this.statements.takenTurns.all()) {
        const why = this.lapseOfTakenTurn(turn, now);
        if (why) events.push(...this.missTurn(turn, now, why));
      }
      for (const turn of this.statements.untakenTurns.all(this.options.takeTurnMs, now, now))
        events.push(...this.passOn(turn, now));
      if (this.disconnectedAt.size > 0) {
        for (const turn of this.statements.allTurns.all()) {
          const gone = turn.state === 'turn' ? this.goneSince(turn.contributor_id, now) : undefined;
          if (gone === undefined) continue;
          if (turn.taken_at === null) events.push(...this.passOn(turn, now, gone));
          else events.push(...this.missTurn(turn, now, { disconnectedAt: gone }));
        }
      }
      if (!this.options.isOpen()) return events;
      for (const circuit of this.options.circuits) {
        if (this.statements.turnOfCircuit.get(circuit)) continue;
        const next = this.nextInLine(circuit, now);
        if (next) events.push(this.grant(circuit, next, now));
      }
      return events;
    });
  }

  /** Why a taken turn, its deadline not passed, ends at `now`: its client silent, or no upload progress. */
  private lapseOfTakenTurn(turn: TurnRow, now: number): LapseCause | undefined {
    const heard = this.lastHeard(turn);
    if (this.options.turnSilenceMs > 0 && now - heard > this.options.turnSilenceMs) return { silentSince: heard };
    const due = this.uploadDueAt(turn);
    if (due === undefined || now <= due) return undefined;
    const progress = this.progressOf.get(turn.contributor_id);
    return progress === undefined ? { uploadDue: due } : { uploadStalledSince: progress.at };
  }

  /**
   * A taken turn missed: its deadline passed, or (`why`) its client fell silent, its holder is gone
   * since their presence stream closed, or its upload did not start or stalled.
   */
  private missTurn(turn: TurnRow, now: number, why: LapseCause = {}): LobbyEvent[] {
    this.endTurn(turn, 'deadline_passed', now);
    const missed = this.countMiss(turn);
    const iso = (at: number | undefined) => (at === undefined ? undefined : new Date(at).toISOString());
    const cause = Object.fromEntries(
      Object.entries({
        silentSince: iso(why.silentSince),
        disconnectedAt: iso(why.disconnectedAt),
        uploadDue: iso(why.uploadDue),
        uploadStalledSince: iso(why.uploadStalledSince),
      }).filter(([, value]) => value !== undefined),
    );
    this.log(
      turn.contributor_id,
      { type: 'lapsed', circuit: turn.circuit, taken: true, missedTurns: missed, ...cause },
      now,
    );
    const consequence = afterMissedTurn('lapsed', missed, now, this.options);
    const event: LobbyEvent = {
      type: 'turn_missed',
      circuit: turn.circuit,
      contributorId: turn.contributor_id,
      at: now,
      deadline: turn.deadline,
      eligibleAt: now + this.options.cooldownMs,
      ...(Object.fromEntries(Object.entries(why).filter(([, value]) => value !== undefined)) as LapseCause),
    };
    return [event, ...this.afterMiss(turn, missed, consequence, now)];
  }

  /**
   * A turn never taken: passed on, a missed turn. The first miss in the circuit puts the entry back
   * in its place (its old seq), away until seen and passed on until the circuit's next turn ends;
   * another goes to the back, or out (turn-order.ts). disconnectedAt: passed on before its time to
   * be taken because its holder is gone since then.
   */
  private passOn(turn: TurnRow, now: number, disconnectedAt?: number): LobbyEvent[] {
    this.endTurn(turn, 'not_taken', now);
    const missed = this.countMiss(turn);
    const gone = disconnectedAt === undefined ? {} : { disconnectedAt: new Date(disconnectedAt).toISOString() };
    this.log(
      turn.contributor_id,
      { type: 'lapsed', circuit: turn.circuit, taken: false, missedTurns: missed, ...gone },
      now,
    );
    const event: LobbyEvent = {
      type: 'turn_passed_on',
      circuit: turn.circuit,
      contributorId: turn.contributor_id,
      at: now,
      takeBy: Math.min(this.takeBy(turn), turn.deadline),
      missedTurns: missed,
    };
    return [event, ...this.afterMiss(turn, missed, afterMissedTurn('not_taken', missed, now, this.options), now)];
  }

  /** Counts a missed turn of `turn`'s holder in its circuit: their misses there, this one included. */
  private countMiss(turn: TurnRow): number {
    return this.statements.countMissed.get(turn.contributor_id, turn.circuit)!.missed;
  }

  /** The contributor's missed turns in `circuit`. */
  private missedIn(contributorId: string, circuit: string): number {
    return this.statements.missedOf.get(contributorId, circuit)?.missed ?? 0;
  }

  /** Applies what a missed turn (the `missed`-th in its circuit) leads to: back in place, at the back, or out. */
  private afterMiss(turn: TurnRow, missed: number, consequence: LapseConsequence, now: number): LobbyEvent[] {
    switch (consequence.kind) {
      case 'back_in_place':
        this.statements.restore.run(
          turn.queue_seq,
          turn.contributor_id,
          turn.circuit,
          turn.queue_enqueued_at ?? turn.started_at,
          now,
        );
        return [];
      case 'back_of_queue':
        this.enqueue(turn.contributor_id, turn.circuit, now, 'missed', consequence.eligibleAt);
        return [];
      case 'removed':
        return [this.removeForMissedTurns(turn.contributor_id, turn.circuit, missed, now)];
      case 'out':
        return [];
    }
  }

  /** Takes the entry out of the queue after its maxMissedTurns-th miss in `circuit`, with the reason shown. */
  private removeForMissedTurns(contributorId: string, circuit: string, missed: number, now: number): LobbyEvent {
    const message =
      `your entry for ${circuit} left the queue after ${missed} missed turns; join again when you can stay ` +
      'until your turn ends (your next turn there comes after a cooldown)';
    this.statements.recordRemoval.run(contributorId, circuit, 'missed_turns', message, now);
    this.log(contributorId, { type: 'removed', circuit, reason: 'missed_turns' }, now);
    return { type: 'entry_removed', circuit, contributorId, at: now, reason: 'missed_turns', missedTurns: missed };
  }

  /**
   * The entry `circuit`'s turn goes to at `now` (turn-order.ts's firstInLine over the queue in FIFO
   * order), having marked away, in the table and the log, each entry passed over because its
   * contributor has not been seen for presenceMs or is gone since their presence stream closed.
   */
  private nextInLine(circuit: string, now: number): QueueRow | undefined {
    const newlyAway: QueueRow[] = [];
    const isGone = (contributorId: string) => this.isGone(contributorId, now);
    // The cursor is read up to the entry chosen only; the table is written once it is closed.
    const queue = function* (rows: Iterable<QueueRow>) {
      for (const row of rows) {
        const gone = row.away === 0 && isGone(row.contributor_id);
        if (gone) newlyAway.push(row);
        yield { row, away: row.away === 1 || gone, eligibleAt: row.eligible_at, passedOn: row.passed_on === 1 };
      }
    };
    const next = firstInLine(queue(this.statements.queueOfCircuitInOrder.iterate(circuit)), now);
    for (const row of newlyAway) {
      this.statements.setAway.run(1, row.contributor_id);
      const seenAt = new Date(this.seenAt.get(row.contributor_id) ?? now).toISOString();
      // The stream's close is named only when it is what made them away (presence alone would not have).
      const closed = isAway(this.seenAt.get(row.contributor_id) ?? now, now, this.options.presenceMs)
        ? undefined
        : this.goneSince(row.contributor_id, now);
      const gone = closed === undefined ? {} : { disconnectedAt: new Date(closed).toISOString() };
      this.log(row.contributor_id, { type: 'away', circuit, seenAt, ...gone }, now);
    }
    return next?.row;
  }

  private grant(circuit: string, next: QueueRow, now: number): LobbyEvent {
    const deadline = now + Math.min(this.options.turnTimeoutMs, this.options.maxTurnMs);
    const { takeTurnMs } = this.options;
    this.statements.dequeue.run(next.contributor_id);
    // Without a time to be taken, a turn counts as taken when granted (its lapse is a missed turn).
    this.statements.grantTurn.run(
      circuit,
      next.contributor_id,
      now,
      deadline,
      takeTurnMs > 0 ? null : now,
      next.seq,
      next.enqueued_at,
    );
    this.log(
      next.contributor_id,
      {
        type: 'granted',
        circuit,
        deadline: new Date(deadline).toISOString(),
        ...(takeTurnMs > 0 ? { takeBy: new Date(now + takeTurnMs).toISOString() } : {}),
      },
      now,
    );
    return { type: 'turn_granted', circuit, contributorId: next.contributor_id, at: now, deadline };
  }

  /**
   * The coordinator takes a contributor's entry out of the lobby: a waiting entry, or a turn not
   * yet uploaded (the circuit goes to the next in line). The contributor sees the reason and may
   * join again. Throws lobby.not_queued when there is no such entry (or it is being verified).
   */
  removeEntry(contributorId: string, message = 'the coordinator removed your entry from the queue'): LobbyRemoval {
    return this.change(() => {
      const now = this.clock.now();
      const waiting = this.statements.queueEntryOf.get(contributorId);
      const turn = this.statements.turnOfContributor.get(contributorId);
      if (turn?.state === 'verifying')
        throw new CoordinatorError(
          'lobby.not_queued',
          `${contributorId} has a contribution to ${turn.circuit} being verified; it cannot be removed now`,
        );
      const circuit = waiting?.circuit ?? turn?.circuit;
      if (circuit === undefined)
        throw new CoordinatorError('lobby.not_queued', `${contributorId} is not waiting in any queue`);
      if (waiting) this.statements.dequeue.run(contributorId);
      if (turn) this.endTurn(turn, 'removed', now);
      this.statements.recordRemoval.run(contributorId, circuit, 'coordinator', message, now);
      this.log(contributorId, { type: 'removed', circuit, reason: 'coordinator' }, now);
      return { circuit, reason: 'coordinator' as const, message, at: now };
    });
  }

  /** Waiting entries in queue order, per circuit, at most `limit` per circuit (the console's list). */
  queueEntries(limit = 500): QueueEntry[] {
    const now = this.clock.now();
    return this.options.circuits.flatMap((circuit) =>
      this.statements.queueOfCircuit.all(circuit, limit).map((row, index) => ({
        circuit,
        contributorId: row.contributor_id,
        position: index + 1,
        enqueuedAt: row.enqueued_at,
        ...(row.eligible_at > now ? { eligibleAt: row.eligible_at } : {}),
        missedTurns: row.missed,
        ...(row.away === 1 || this.isGone(row.contributor_id, now) ? { away: true as const } : {}),
      })),
    );
  }

  /**
   * Takes the live turn if it is not taken yet, and extends it: deadline = max(deadline, now +
   * heartbeatExtension), never past startedAt + maxTurn.
   */
  heartbeat(contributorId: string, circuit: string): TurnHeartbeat {
    return this.change(() => {
      const now = this.clock.now();
      const turn = this.requireLiveTurn(contributorId, circuit);
      this.markTaken(turn, now);
      const deadline = Math.min(
        Math.max(turn.deadline, now + this.options.heartbeatExtensionMs),
        turn.started_at + this.options.maxTurnMs,
      );
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
    this.db.transaction(() => this.requireLiveTurn(contributorId, circuit))();
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
      const turn = this.requireLiveTurn(contributorId, circuit);
      // An upload is the surest sign of someone there (a client that skipped the download and heartbeat).
      this.markTaken(turn, this.clock.now());
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
      const turn = this.verifyingSubmission(contributionId);
      if (!turn) return false;
      const now = this.clock.now();
      const who = turn.contributor_id;
      const outcome = turnOutcome(transition(turn.state, VERDICT_EVENTS[verdict.status]));
      this.logEndedTurn(turn, outcome, now);
      // The contributor left while this was being verified: the verdict is theirs, no new place is.
      const stays = this.statements.clearLeaving.run(who).changes === 0;
      // Queued again right after a verdict: they are there (their page or terminal just uploaded).
      if (stays) this.seenAt.set(who, now);
      if (verdict.status === 'accepted') {
        this.statements.recordAccepted.run(
          who,
          turn.circuit,
          contributionId,
          verdict.chainIndex,
          verdict.contributionHash,
          now,
        );
        this.log(
          who,
          {
            type: 'accepted',
            circuit: turn.circuit,
            index: verdict.chainIndex,
            transcriptHash: verdict.transcriptHash,
          },
          now,
        );
        if (stays) this.enqueueForNextCircuit(who, now, 'accepted');
        return true;
      }
      const missed =
        verdict.status === 'refused' || (verdict.status === 'error' && errorCausedByUpload)
          ? this.countMiss(turn)
          : undefined;
      const step = { type: 'refused', circuit: turn.circuit, code: verdict.code, outcome: verdict.status } as const;
      this.log(who, missed === undefined ? step : { ...step, missedTurns: missed }, now);
      if (isShownRefusal(verdict))
        this.statements.recordRefusal.run(who, turn.circuit, verdict.code, verdict.message, now);
      if (!stays) return true;
      if (missed !== undefined && afterMissedTurn('refused', missed, now, this.options).kind === 'removed') {
        this.removeForMissedTurns(who, turn.circuit, missed, now);
        return true;
      }
      // Back in the same queue, unless a join during the verification chose circuits without it.
      const chosen = this.chosenCircuits(who);
      if (chosen === undefined || chosen.includes(turn.circuit)) this.enqueue(who, turn.circuit, now, 'refused');
      else this.enqueueForNextCircuit(who, now, 'refused');
      return true;
    });
  }

  /** The verifying submission of this contribution; undefined if its outcome is already recorded. */
  private verifyingSubmission(contributionId: string): TurnRow | undefined {
    const turn = this.statements.turnOfContribution.get(contributionId);
    if (turn) return turn;
    if (this.statements.historyOfContribution.get(contributionId)) return undefined;
    throw new CoordinatorError('not_found', `no submission ${contributionId} is being verified`);
  }

  /** Ends a turn by a life-cycle event (a missed deadline, a removal). */
  private endTurn(turn: TurnRow, event: LifecycleEvent, now: number): void {
    this.logEndedTurn(turn, turnOutcome(transition(turn.state, event)), now);
  }

  /** Ends a turn: whoever waits passed on in its circuit is eligible again, as that was the turn they passed on. */
  private logEndedTurn(turn: TurnRow, outcome: TurnOutcome, now: number): void {
    this.heardAt.delete(turn.contributor_id);
    this.progressOf.delete(turn.contributor_id);
    this.statements.endTurn.run(turn.circuit);
    this.statements.releasePassedOn.run(turn.circuit);
    this.statements.logTurn.run(turn.circuit, turn.contributor_id, turn.started_at, now, outcome, turn.contribution_id);
  }

  private enqueueForNextCircuit(contributorId: string, now: number, via: JoinCause): void {
    const accepted = new Set(this.statements.acceptedOf.all(contributorId).map((row) => row.circuit));
    const chosen = this.chosenCircuits(contributorId);
    const next = this.options.circuits.find(
      (circuit) => !accepted.has(circuit) && (chosen === undefined || chosen.includes(circuit)),
    );
    if (next !== undefined) this.enqueue(contributorId, next, now, via);
  }

  /** The contributor's choice of circuits (undefined: every circuit); names no longer configured are dropped. */
  private chosenCircuits(contributorId: string): string[] | undefined {
    const row = this.statements.selectionOf.get(contributorId);
    if (!row) return undefined;
    const names = JSON.parse(row.circuits) as unknown;
    return Array.isArray(names) ? this.options.circuits.filter((circuit) => names.includes(circuit)) : undefined;
  }

  /** A choice of circuits checked against the ceremony's and put in its order. */
  private inCeremonyOrder(circuits: readonly string[]): string[] {
    const unknown = circuits.filter((circuit) => !this.options.circuits.includes(circuit));
    if (unknown.length > 0)
      throw new CoordinatorError(
        'circuit.unknown',
        `this ceremony has no circuit ` +
          `${unknown.map((c) => `"${c}"`).join(', ')}; it has ` +
          `${this.options.circuits.join(', ')}`,
      );
    if (circuits.length === 0)
      throw new CoordinatorError('request.invalid', 'choose at least one circuit, or none to join every circuit');
    return this.options.circuits.filter((circuit) => circuits.includes(circuit));
  }

  private requireLiveTurn(contributorId: string, circuit: string): TurnRow {
    if (!this.options.circuits.includes(circuit))
      throw new CoordinatorError('circuit.unknown', `unknown circuit "${circuit}"`);
    const notYourTurn = (message: string): CoordinatorError => new CoordinatorError('lobby.not_your_turn', message);
    if (this.statements.acceptedOf.all(contributorId).some((row) => row.circuit === circuit)) {
      throw new CoordinatorError('lobby.already_contributed', `you already contributed to ${circuit}`);
    }
    const turn = this.statements.turnOfContributor.get(contributorId);
    if (turn) {
      if (turn.circuit !== circuit) {
        throw notYourTurn(
          turn.state === 'turn'
            ? `your turn is on ${turn.circuit}, not ${circuit}`
            : `your contribution to ${turn.circuit} is being verified; ${circuit} comes later`,
        );
      }
      if (turn.state === 'verifying')
        throw notYourTurn(`your contribution to ${circuit} is already uploaded and being verified`);
      const now = this.clock.now();
      if (turn.deadline < now)
        throw notYourTurn(`your turn on ${circuit} expired at ${new Date(turn.deadline).toISOString()}`);
      if (turn.taken_at === null && now > this.takeBy(turn))
        throw notYourTurn(
          `your turn on ${circuit} passed to the next in line, a missed turn: it was not started by ` +
            `${new Date(this.takeBy(turn)).toISOString()}`,
        );
      // Any request of the holder's for its turn (a heartbeat, an upload's) is a sign of life.
      if (turn.taken_at !== null) this.heard(contributorId, now);
      return turn;
    }
    const waiting = this.statements.queueEntryOf.get(contributorId);
    if (waiting) {
      const position = this.statements.positionOf.get(waiting.circuit, waiting.seq)!.ahead + 1;
      const cooling =
        waiting.eligible_at > this.clock.now()
          ? `, after missed turns not before ${new Date(waiting.eligible_at).toISOString()}`
          : '';
      throw notYourTurn(
        waiting.circuit === circuit
          ? `it is not your turn on ${circuit} yet: position ${position} in its queue${cooling}`
          : `you are waiting for ${waiting.circuit} (position ${position}${cooling}), not ${circuit}`,
      );
    }
    throw notYourTurn(`you are not in the queue: join the ceremony first`);
  }

  private readStatus(contributorId: string): ContributorStatus {
    const now = this.clock.now();
    const accepted = new Map(this.statements.acceptedOf.all(contributorId).map((row) => [row.circuit, row]));
    const turn = this.statements.turnOfContributor.get(contributorId);
    const waiting = this.statements.queueEntryOf.get(contributorId);
    const circuits = this.options.circuits.map((circuit): CircuitProgress => {
      const done = accepted.get(circuit);
      if (done)
        return {
          circuit,
          state: 'accepted',
          contributionId: done.contribution_id,
          index: done.chain_index,
          contributionHash: done.contribution_hash,
        };
      if (turn?.circuit === circuit) {
        if (turn.state === 'verifying') return { circuit, state: 'verifying', contributionId: turn.contribution_id! };
        const untaken = turn.taken_at === null ? { takeBy: Math.min(this.takeBy(turn), turn.deadline) } : {};
        return { circuit, state: 'turn', startedAt: turn.started_at, deadline: turn.deadline, ...untaken };
      }
      if (waiting?.circuit === circuit) {
        const position = this.statements.positionOf.get(circuit, waiting.seq)!.ahead + 1;
        const current = this.statements.turnOfCircuit.get(circuit);
        const etaMs = estimateWait({
          position,
          averageTurnMs: this.averageTurnMs(circuit),
          currentStartedAt: current?.started_at,
          eligibleAt: waiting.eligible_at,
          now,
        });
        return waiting.eligible_at > now
          ? { circuit, state: 'waiting', position, etaMs, eligibleAt: waiting.eligible_at }
          : { circuit, state: 'waiting', position, etaMs };
      }
      return { circuit, state: 'pending' };
    });
    const refusal = this.statements.refusalOf.get(contributorId);
    const removal = this.statements.removalOf.get(contributorId);
    const chosen = this.chosenCircuits(contributorId);
    return {
      contributorId,
      circuits,
      ...(refusal
        ? {
            lastRefusal: {
              circuit: refusal.circuit,
              code: errorCodeOr(refusal.code, 'internal'),
              message: refusal.message,
              at: refusal.at,
            },
          }
        : {}),
      ...(removal
        ? { removed: { circuit: removal.circuit, reason: removal.reason, message: removal.message, at: removal.at } }
        : {}),
      done: this.options.circuits.every((circuit) => accepted.has(circuit)),
      ...(chosen ? { chosenCircuits: chosen } : {}),
      ...(this.statements.leavingOf.get(contributorId) ? { leaving: true as const } : {}),
      presence: {
        awayAfterMs: this.options.presenceMs,
        takeTurnWithinMs: this.options.takeTurnMs,
        silentTurnAfterMs: this.options.turnSilenceMs,
        goneAfterDisconnectMs: this.options.disconnectGraceMs,
      },
    };
  }

  private averageTurnMs(circuit: string): number {
    return this.statements.averageTurn.get(circuit, TURN_SAMPLES)?.average ?? this.options.defaultTurnEstimateMs;
  }
}

/** The life-cycle event each settled verdict is, for the transition of the turn it ends. */
const VERDICT_EVENTS: Record<SettledVerdict['status'], LifecycleEvent> = {
  accepted: 'committed',
  refused: 'refused',
  discarded: 'not_committed',
  error: 'unverifiable',
};

type LobbyStatements = ReturnType<typeof prepareStatements>;

/** Every query of the lobby, prepared once. */
function prepareStatements(db: Db) {
  return {
    queueEntryOf: db.prepare<[string], QueueRow>('SELECT * FROM lobby_queue WHERE contributor_id = ?'),
    positionOf: db.prepare<[string, number], { ahead: number }>(
      'SELECT COUNT(*) AS ahead FROM lobby_queue WHERE circuit = ? AND seq < ?',
    ),
    queueLengths: db.prepare<[], { circuit: string; waiting: number }>(
      'SELECT circuit, COUNT(*) AS waiting FROM lobby_queue GROUP BY circuit',
    ),
    enqueue: db.prepare<[string, string, number, number]>(
      'INSERT INTO lobby_queue (contributor_id, circuit, enqueued_at, eligible_at) VALUES (?, ?, ?, ?)',
    ),
    dequeue: db.prepare<[string]>('DELETE FROM lobby_queue WHERE contributor_id = ?'),
    // An untaken turn's entry, back at its old seq (its place), away and passed on.
    restore: db.prepare<[number | null, string, string, number, number]>(
      'INSERT INTO lobby_queue (seq, contributor_id, circuit, enqueued_at, eligible_at, away, passed_on) ' +
        'VALUES (?, ?, ?, ?, ?, 1, 1)',
    ),
    releasePassedOn: db.prepare<[string]>('UPDATE lobby_queue SET passed_on = 0 WHERE circuit = ? AND passed_on = 1'),
    setAway: db.prepare<[0 | 1, string]>('UPDATE lobby_queue SET away = ? WHERE contributor_id = ?'),
    allQueued: db.prepare<[], { contributor_id: string }>('SELECT contributor_id FROM lobby_queue'),
    // The circuit's queue in FIFO order (turn-order.ts's firstInLine reads it as far as it needs).
    queueOfCircuitInOrder: db.prepare<[string], QueueRow>('SELECT * FROM lobby_queue WHERE circuit = ? ORDER BY seq'),
    turnOfCircuit: db.prepare<[string], TurnRow>('SELECT * FROM lobby_turns WHERE circuit = ?'),
    turnOfContributor: db.prepare<[string], TurnRow>('SELECT * FROM lobby_turns WHERE contributor_id = ?'),
    turnOfContribution: db.prepare<[string], TurnRow>('SELECT * FROM lobby_turns WHERE contribution_id = ?'),
    allTurns: db.prepare<[], TurnRow>('SELECT * FROM lobby_turns ORDER BY started_at, circuit'),
    nextEligibleAt: db.prepare<[number], { at: number | null }>(
      'SELECT MIN(eligible_at) AS at FROM lobby_queue WHERE eligible_at > ?',
    ),
    expiredTurns: db.prepare<[number], TurnRow>(
      "SELECT * FROM lobby_turns WHERE state = 'turn' AND deadline < ? ORDER BY deadline",
    ),
    // Not taken by their time (startedAt + takeTurnMs), or by their deadline if that comes first.
    takenTurns: db.prepare<[], TurnRow>(
      "SELECT * FROM lobby_turns WHERE state = 'turn' AND taken_at IS NOT NULL ORDER BY started_at, circuit",
    ),
    untakenTurns: db.prepare<[number, number, number], TurnRow>(
      `SELECT * FROM lobby_turns WHERE state = 'turn' AND taken_at IS NULL
         AND (started_at + ? < ? OR deadline < ?) ORDER BY started_at, circuit`,
    ),
    grantTurn: db.prepare<[string, string, number, number, number | null, number, number]>(
      'INSERT INTO lobby_turns (circuit, contributor_id, state, started_at, deadline, taken_at, queue_seq, ' +
        "queue_enqueued_at) VALUES (?, ?, 'turn', ?, ?, ?, ?, ?)",
    ),
    setTaken: db.prepare<[number, string]>('UPDATE lobby_turns SET taken_at = ? WHERE circuit = ?'),
    setDeadline: db.prepare<[number, string]>('UPDATE lobby_turns SET deadline = ? WHERE circuit = ?'),
    setVerifying: db.prepare<[TurnRow['state'], string, string]>(
      'UPDATE lobby_turns SET state = ?, contribution_id = ? WHERE circuit = ?',
    ),
    endTurn: db.prepare<[string]>('DELETE FROM lobby_turns WHERE circuit = ?'),
    logTurn: db.prepare<[string, string, number, number, TurnOutcome, string | null]>(
      'INSERT INTO lobby_turn_history (circuit, contributor_id, started_at, ' +
        'ended_at, outcome, contribution_id) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    historyOfContribution: db.prepare<[string], { outcome: TurnOutcome }>(
      'SELECT outcome FROM lobby_turn_history WHERE contribution_id = ?',
    ),
    averageTurn: db.prepare<[string, number], { average: number | null }>(
      `SELECT AVG(ended_at - started_at) AS average FROM (
         SELECT started_at, ended_at FROM lobby_turn_history
         WHERE circuit = ? AND outcome = 'accepted' ORDER BY id DESC LIMIT ?)`,
    ),
    acceptedOf: db.prepare<[string], AcceptedRow>(
      'SELECT circuit, contribution_id, chain_index, contribution_hash FROM lobby_accepted WHERE contributor_id = ?',
    ),
    recordAccepted: db.prepare<[string, string, string, number, string, number]>(
      'INSERT INTO lobby_accepted (contributor_id, circuit, contribution_id, ' +
        'chain_index, contribution_hash, accepted_at) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    countMissed: db.prepare<[string, string], { missed: number }>(
      `INSERT INTO lobby_missed_turns (contributor_id, circuit, missed) VALUES (?, ?, 1)
       ON CONFLICT (contributor_id, circuit) DO UPDATE SET missed = missed + 1 RETURNING missed`,
    ),
    missedOf: db.prepare<[string, string], { missed: number }>(
      'SELECT missed FROM lobby_missed_turns WHERE contributor_id = ? AND circuit = ?',
    ),
    removalOf: db.prepare<[string], RemovalRow>(
      'SELECT circuit, reason, message, at FROM lobby_removals WHERE contributor_id = ?',
    ),
    recordRemoval: db.prepare<[string, string, LobbyRemoval['reason'], string, number]>(
      `INSERT INTO lobby_removals (contributor_id, circuit, reason, message, at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (contributor_id) DO UPDATE
       SET circuit = excluded.circuit, reason = excluded.reason, message = excluded.message, at = excluded.at`,
    ),
    clearRemoval: db.prepare<[string]>('DELETE FROM lobby_removals WHERE contributor_id = ?'),
    selectionOf: db.prepare<[string], { circuits: string }>(
      'SELECT circuits FROM lobby_selections WHERE contributor_id = ?',
    ),
    setSelection: db.prepare<[string, string]>(
      'INSERT INTO lobby_selections (contributor_id, circuits) VALUES (?, ?) ' +
        'ON CONFLICT (contributor_id) DO UPDATE SET circuits = excluded.circuits',
    ),
    clearSelection: db.prepare<[string]>('DELETE FROM lobby_selections WHERE contributor_id = ?'),
    leavingOf: db.prepare<[string], { at: number }>('SELECT at FROM lobby_leaving WHERE contributor_id = ?'),
    markLeaving: db.prepare<[string, number]>(
      'INSERT OR REPLACE INTO lobby_leaving (contributor_id, at) VALUES (?, ?)',
    ),
    clearLeaving: db.prepare<[string]>('DELETE FROM lobby_leaving WHERE contributor_id = ?'),
    queueOfCircuit: db.prepare<[string, number], QueueRow & { missed: number }>(
      `SELECT q.*, COALESCE(m.missed, 0) AS missed FROM lobby_queue q
       LEFT JOIN lobby_missed_turns m ON m.contributor_id = q.contributor_id AND m.circuit = q.circuit
       WHERE q.circuit = ? ORDER BY q.seq LIMIT ?`,
    ),
    refusalOf: db.prepare<[string], RefusalRow>(
      'SELECT circuit, code, message, at FROM lobby_refusals WHERE contributor_id = ?',
    ),
    recordRefusal: db.prepare<[string, string, string, string, number]>(
      `INSERT INTO lobby_refusals (contributor_id, circuit, code, message, at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (contributor_id) DO UPDATE
       SET circuit = excluded.circuit, code = excluded.code, message = excluded.message, at = excluded.at`,
    ),
  };
}

function resolveOptions(options: LobbyOptions): ResolvedLobbyOptions {
  const resolved: ResolvedLobbyOptions = {
    ...LOBBY_DEFAULTS,
    ...Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)),
    circuits: [...options.circuits],
    ceremonyId: options.ceremonyId,
    isOpen: options.isOpen,
  } as ResolvedLobbyOptions;
  if (resolved.circuits.length === 0 || new Set(resolved.circuits).size !== resolved.circuits.length) {
    throw new CoordinatorError('config.invalid', 'lobby circuits must be a non-empty list of distinct names');
  }
  if (!Number.isInteger(resolved.maxMissedTurns) || resolved.maxMissedTurns < 1) {
    throw new CoordinatorError('config.invalid', 'lobby maxMissedTurns must be a positive whole number');
  }
  if (typeof resolved.ceremonyId !== 'string' || resolved.ceremonyId === '')
    throw new CoordinatorError('config.invalid', 'the lobby needs the ceremony id (its queue log is bound to it)');
  for (const key of [
    'presenceMs',
    'takeTurnMs',
    'turnTimeoutMs',
    'turnSilenceMs',
    'disconnectGraceMs',
    'uploadStartMs',
    'uploadStallMs',
    'heartbeatExtensionMs',
    'maxTurnMs',
    'cooldownMs',
    'defaultTurnEstimateMs',
  ] as const) {
    if (!Number.isFinite(resolved[key]) || resolved[key] < 0)
      throw new CoordinatorError('config.invalid', `lobby ${key} must be a non-negative number of milliseconds`);
  }
  return Object.freeze(resolved);
}
