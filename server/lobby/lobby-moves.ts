/**
 * The lobby's moves: a turn granted, taken, missed, passed on or ended, an entry queued or removed,
 * each written to the tables and appended to the queue log in the order the log is read. Every move
 * runs inside the transaction of the Lobby method that makes it (lobby.ts change()), never its own.
 */
import { CoordinatorError } from '../../core/errors.ts';
import type { JoinCause } from '../../core/queue-log/queue-log-entry.ts';
import {
  afterMissedTurn,
  eligibleOnJoin,
  firstInLine,
  offeredBefore,
  standbyDepth,
  type LapseConsequence,
  type MissedTurnKind,
} from '../../core/queue-log/turn-order.ts';
import {
  isShownRefusal,
  transition,
  turnOutcome,
  type LifecycleEvent,
  type SettledVerdict,
  type TurnOutcome,
} from '../contributions/contribution-lifecycle.ts';
import type { LobbyPresence } from './lobby-presence.ts';
import type { LobbyReader } from './lobby-reader.ts';
import {
  grantedTurn,
  keepsCircuit,
  lapseOfTakenTurn,
  mayTake,
  nextCircuit,
  shownTakeBy,
  STANDBY_SCAN_ROWS,
  turnOver,
  type LapseCause,
} from './lobby-rules.ts';
import { turnTimes, type LobbyStatements, type QueueRow, type TurnRow } from './lobby-statements.ts';
import type { LeaveOutcome, LobbyEvent, LobbyRemoval, ResolvedLobbyOptions } from './lobby-types.ts';
import type { ProposedStep, QueueLogStore } from './queue-log-store.ts';

export class LobbyMoves {
  constructor(
    private readonly statements: LobbyStatements,
    private readonly queueLog: QueueLogStore,
    private readonly options: ResolvedLobbyOptions,
    private readonly presence: LobbyPresence,
    private readonly reader: LobbyReader,
  ) {}

  log(contributorId: string, step: ProposedStep, now: number): void {
    this.queueLog.append(contributorId, step, now);
  }

  /** Records the turn as taken, unless its time to be taken has passed (then it is passing on). */
  markTaken(turn: TurnRow, now: number): boolean {
    if (turn.taken_at !== null) return true;
    if (!mayTake(turnTimes(turn), now, this.options)) return false;
    this.statements.setTaken.run(now, turn.circuit);
    turn.taken_at = now;
    this.presence.heard(turn.contributor_id, now);
    this.log(turn.contributor_id, { type: 'taken', circuit: turn.circuit }, now);
    return true;
  }

  /**
   * Puts the contributor at the back of `circuit`'s queue, and logs it with their place in it;
   * eligible at `eligibleAt`, by default when the rules let a join be (turn-order.ts eligibleOnJoin).
   */
  enqueue(contributorId: string, circuit: string, now: number, via: JoinCause, eligibleAt?: number): void {
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

  /** Lobby.leave's move: out of the queue, or the turn given up, or out after the verdict. */
  leave(contributorId: string, now: number): LeaveOutcome {
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
  }

  /** Lobby.removeEntry's move: the coordinator takes a waiting entry or an unsubmitted turn out. */
  removeEntry(contributorId: string, message: string, now: number): LobbyRemoval {
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
  }

  /**
   * Ends the turns whose time ran out by `now` (Lobby.tick's (1) and (2)): taken turns past their
   * deadline, silent or without upload progress are missed; turns not taken by their time passed
   * on; then the turns of holders gone since their presence stream closed, either way.
   */
  endLapsedTurns(now: number): LobbyEvent[] {
    const events: LobbyEvent[] = [];
    for (const turn of this.statements.expiredTurns.all(now)) {
      if (turn.taken_at === null) continue; // passed on below
      events.push(...this.missTurn(turn, now));
    }
    for (const turn of this.statements.takenTurns.all()) {
      const times = turnTimes(turn);
      const heard = this.presence.lastHeard(turn.contributor_id, times);
      const why = lapseOfTakenTurn(times, heard, this.presence.progress(turn.contributor_id), now, this.options);
      if (why) events.push(...this.missTurn(turn, now, why));
    }
    for (const turn of this.statements.untakenTurns.all(this.options.takeTurnMs, now, now))
      events.push(...this.passOn(turn, now));
    if (this.presence.anyClosed()) {
      for (const turn of this.statements.allTurns.all()) {
        const gone = turn.state === 'turn' ? this.presence.goneSince(turn.contributor_id, now) : undefined;
        if (gone === undefined) continue;
        if (turn.taken_at === null) events.push(...this.passOn(turn, now, gone));
        else events.push(...this.missTurn(turn, now, { disconnectedAt: gone }));
      }
    }
    return events;
  }

  /**
   * A taken turn missed: its deadline passed, or (`why`) its client fell silent, its holder is gone
   * since their presence stream closed, or its upload did not start or stalled.
   */
  missTurn(turn: TurnRow, now: number, why: LapseCause = {}): LobbyEvent[] {
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
    return [event, ...this.afterMiss(turn, missed, consequence, now, () => this.restore(turn, now))];
  }

  /**
   * A turn never taken: passed on, a missed turn. The first miss in the circuit puts the entry back
   * in its place (its old seq), away until seen and passed on until the circuit's next turn ends;
   * another goes to the back, or out (turn-order.ts). disconnectedAt: passed on before its time to
   * be taken because its holder is gone since then.
   */
  passOn(turn: TurnRow, now: number, disconnectedAt?: number, takenOverBy?: string): LobbyEvent[] {
    this.endTurn(turn, 'not_taken', now);
    const missed = this.countMiss(turn);
    const gone = disconnectedAt === undefined ? {} : { disconnectedAt: new Date(disconnectedAt).toISOString() };
    const overtaken = takenOverBy === undefined ? {} : { takenOverBy };
    this.log(
      turn.contributor_id,
      { type: 'lapsed', circuit: turn.circuit, taken: false, missedTurns: missed, ...gone, ...overtaken },
      now,
    );
    const event: LobbyEvent = {
      type: 'turn_passed_on',
      circuit: turn.circuit,
      contributorId: turn.contributor_id,
      at: now,
      takeBy: shownTakeBy(turnTimes(turn), this.options),
      missedTurns: missed,
      ...overtaken,
    };
    const consequence = afterMissedTurn('not_taken', missed, now, this.options);
    return [event, ...this.afterMiss(turn, missed, consequence, now, () => this.restore(turn, now))];
  }

  /**
   * After a verdict other than accepted on `turn` (ended already): logged, with the missed turn
   * when it `counted` one; a refusal or error shown in the status; and, when the contributor
   * `stays` (did not leave meanwhile), out of the queue at the missed-turn limit, else back of the
   * same queue, unless a join during the verification chose circuits without it.
   */
  refused(
    turn: TurnRow,
    verdict: Exclude<SettledVerdict, { status: 'accepted' }>,
    { stays, counted }: { stays: boolean; counted: MissedTurnKind | undefined },
    now: number,
  ): void {
    const who = turn.contributor_id;
    const missed = counted ? this.countMiss(turn) : undefined;
    const step = { type: 'refused', circuit: turn.circuit, code: verdict.code, outcome: verdict.status } as const;
    this.log(who, missed === undefined ? step : { ...step, missedTurns: missed }, now);
    if (isShownRefusal(verdict))
      this.statements.recordRefusal.run(who, turn.circuit, verdict.code, verdict.message, now);
    if (!stays) return;
    if (missed !== undefined && afterMissedTurn('refused', missed, now, this.options).kind === 'removed') {
      this.removeForMissedTurns(who, turn.circuit, missed, now);
      return;
    }
    if (keepsCircuit(this.reader.chosenCircuits(who), turn.circuit)) this.enqueue(who, turn.circuit, now, 'refused');
    else this.enqueueForNextCircuit(who, now, 'refused');
  }

  /** Counts a missed turn of `turn`'s holder in its circuit: their misses there, this one included. */
  countMiss(turn: Pick<QueueRow, 'contributor_id' | 'circuit'>): number {
    return this.statements.countMissed.get(turn.contributor_id, turn.circuit)!.missed;
  }

  /** The contributor's missed turns in `circuit`. */
  private missedIn(contributorId: string, circuit: string): number {
    return this.statements.missedOf.get(contributorId, circuit)?.missed ?? 0;
  }

  /**
   * Applies what a missed turn (the `missed`-th of `who` in its circuit) leads to: back in place
   * (`inPlace`: a turn's entry restored, a waiting entry passed on), at the back, or out. `who` is
   * in no queue when called (a turn ended, or a waiting entry taken out), but for `inPlace`.
   */
  private afterMiss(
    who: Pick<QueueRow, 'contributor_id' | 'circuit'>,
    missed: number,
    consequence: LapseConsequence,
    now: number,
    inPlace: () => void,
  ): LobbyEvent[] {
    switch (consequence.kind) {
      case 'back_in_place':
        inPlace();
        return [];
      case 'back_of_queue':
        this.enqueue(who.contributor_id, who.circuit, now, 'missed', consequence.eligibleAt);
        return [];
      case 'removed':
        return [this.removeForMissedTurns(who.contributor_id, who.circuit, missed, now)];
      case 'out':
        return [];
    }
  }

  /** A turn's entry back at its old place (seq), away until seen and passed on. */
  private restore(turn: TurnRow, now: number): void {
    const enqueuedAt = turn.queue_enqueued_at ?? turn.started_at;
    this.statements.restore.run(turn.queue_seq, turn.contributor_id, turn.circuit, enqueuedAt, now);
  }

  /** Takes the entry out of the queue after its maxMissedTurns-th miss in `circuit`, with the reason shown. */
  removeForMissedTurns(contributorId: string, circuit: string, missed: number, now: number): LobbyEvent {
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
  nextInLine(circuit: string, now: number): QueueRow | undefined {
    const newlyAway: QueueRow[] = [];
    const rows = this.statements.queueOfCircuitInOrder.iterate(circuit);
    const next = firstInLine(this.presence.line(rows, now, newlyAway), now);
    this.markAway(circuit, newlyAway, now);
    return next?.row;
  }

  /**
   * `candidate` takes `turn` (granted to another, not taken yet) on standby, if the rules offer it
   * to them at `now` (turn-order.ts offeredBefore): the grant passes on as its grantee's missed
   * turn, so is the offer to each entry offered it before them (`skipped`), and the turn is the
   * candidate's, taken. Undefined when not offered (the entries found gone on the way are marked
   * away either way, as nextInLine marks them).
   */
  takeOnStandby(turn: TurnRow, candidate: string, now: number): LobbyEvent[] | undefined {
    if (turn.state !== 'turn' || turn.taken_at !== null || turnOver(turnTimes(turn), now, this.options)) return;
    // Asked again inside the transaction: the phase is stored, and a finalise may have closed the
    // ceremony since the offer was read outside it.
    if (!this.options.isOpen()) return;
    const depth = standbyDepth(turn.started_at, now, this.options);
    if (depth === 0) return;
    const newlyAway: QueueRow[] = [];
    const rows = this.statements.queueOfCircuitInOrder.iterate(turn.circuit);
    const before = offeredBefore(
      this.presence.line(rows, now, newlyAway, STANDBY_SCAN_ROWS),
      (entry) => entry.row.contributor_id === candidate,
      depth,
      now,
    );
    this.markAway(turn.circuit, newlyAway, now);
    const entry = before ? this.statements.queueEntryOf.get(candidate) : undefined;
    if (!before || !entry || entry.circuit !== turn.circuit) return;
    const takenOverBy = this.queueLog.identify(candidate).contributor;
    const events = this.passOn(turn, now, undefined, takenOverBy);
    for (const { row } of before) events.push(...this.letPass(row, takenOverBy, now));
    return [...events, this.grant(turn.circuit, entry, now, { taken: true })];
  }

  /**
   * A waiting entry offered the turn on standby before the one that took it let it pass: a missed
   * turn, not taken, with the grantee's consequence (turn-order.ts afterMissedTurn): passed on in
   * its place the first time, else at the back of the queue or out of it.
   */
  private letPass(row: QueueRow, takenOverBy: string, now: number): LobbyEvent[] {
    const missed = this.countMiss(row);
    this.log(row.contributor_id, { type: 'skipped', circuit: row.circuit, takenOverBy, missedTurns: missed }, now);
    const consequence = afterMissedTurn('not_taken', missed, now, this.options);
    const passed: LobbyEvent = {
      type: 'standby_let_pass',
      circuit: row.circuit,
      contributorId: row.contributor_id,
      at: now,
      missedTurns: missed,
      takenOverBy,
    };
    if (consequence.kind !== 'back_in_place') this.statements.dequeue.run(row.contributor_id);
    const inPlace = () => this.statements.setPassedOn.run(row.contributor_id);
    return [passed, ...this.afterMiss(row, missed, consequence, now, inPlace)];
  }

  /** Marks away, in the table and the log, the entries presence.line found gone. */
  private markAway(circuit: string, newlyAway: readonly QueueRow[], now: number): void {
    for (const row of newlyAway) {
      this.statements.setAway.run(1, row.contributor_id);
      const cause = this.presence.awayCause(row.contributor_id, now);
      const seenAt = new Date(cause.seenAt).toISOString();
      const gone =
        cause.disconnectedAt === undefined ? {} : { disconnectedAt: new Date(cause.disconnectedAt).toISOString() };
      this.log(row.contributor_id, { type: 'away', circuit, seenAt, ...gone }, now);
    }
  }

  /** Grants `circuit`'s turn to `next`; `taken`: taken at once (on standby), so it has no time to be taken. */
  grant(circuit: string, next: QueueRow, now: number, { taken = false } = {}): LobbyEvent {
    // Without a time to be taken, a turn counts as taken when granted (its lapse is a missed turn).
    const granted = grantedTurn(now, this.options);
    const { deadline } = granted;
    const takenAt = taken ? now : granted.takenAt;
    const takeBy = taken ? undefined : granted.takeBy;
    this.statements.dequeue.run(next.contributor_id);
    this.statements.grantTurn.run(circuit, next.contributor_id, now, deadline, takenAt, next.seq, next.enqueued_at);
    this.log(
      next.contributor_id,
      {
        type: 'granted',
        circuit,
        deadline: new Date(deadline).toISOString(),
        ...(takeBy !== undefined ? { takeBy: new Date(takeBy).toISOString() } : {}),
      },
      now,
    );
    if (taken) {
      this.presence.heard(next.contributor_id, now);
      this.log(next.contributor_id, { type: 'taken', circuit }, now);
    }
    return { type: 'turn_granted', circuit, contributorId: next.contributor_id, at: now, deadline };
  }

  /** Ends a turn by a life-cycle event (a missed deadline, a removal). */
  endTurn(turn: TurnRow, event: LifecycleEvent, now: number): void {
    this.logEndedTurn(turn, turnOutcome(transition(turn.state, event)), now);
  }

  /** Ends a turn: whoever waits passed on in its circuit is eligible again, as that was the turn they passed on. */
  logEndedTurn(turn: TurnRow, outcome: TurnOutcome, now: number): void {
    this.presence.turnEnded(turn.contributor_id);
    this.statements.endTurn.run(turn.circuit);
    this.statements.releasePassedOn.run(turn.circuit);
    this.statements.logTurn.run(turn.circuit, turn.contributor_id, turn.started_at, now, outcome, turn.contribution_id);
  }

  enqueueForNextCircuit(contributorId: string, now: number, via: JoinCause): void {
    const accepted = new Set(this.statements.acceptedOf.all(contributorId).map((row) => row.circuit));
    const next = nextCircuit(this.options.circuits, accepted, this.reader.chosenCircuits(contributorId));
    if (next !== undefined) this.enqueue(contributorId, next, now, via);
  }
}
