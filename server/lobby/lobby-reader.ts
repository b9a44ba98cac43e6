/**
 * The lobby's answers: a contributor's status, the queues, the turns in progress, and whether a
 * request is its sender's live turn. Reads only, but for one observation: a request of a turn's
 * holder for its turn is a sign of life (lobby-presence.ts).
 */
import { errorCodeOr, CoordinatorError } from '../../core/errors.ts';
import type { Clock } from '../clock.ts';
import { mayTakeOnStandby, standbyDepth } from '../../core/queue-log/turn-order.ts';
import { estimateWait, TURN_SAMPLES } from './estimate-wait.ts';
import type { LobbyPresence } from './lobby-presence.ts';
import { shownTakeBy, STANDBY_SCAN_ROWS, takeBy, turnOver } from './lobby-rules.ts';
import { turnTimes, type LobbyStatements, type TurnRow } from './lobby-statements.ts';
import type {
  ActiveTurn,
  CircuitProgress,
  ContributorStatus,
  QueueEntry,
  ResolvedLobbyOptions,
} from './lobby-types.ts';

export class LobbyReader {
  constructor(
    private readonly statements: LobbyStatements,
    private readonly options: ResolvedLobbyOptions,
    private readonly presence: LobbyPresence,
    private readonly clock: Clock,
  ) {}

  /** Contributors waiting, per configured circuit (0 for an empty queue). */
  queueLengths(): Record<string, number> {
    const lengths: Record<string, number> = Object.fromEntries(this.options.circuits.map((circuit) => [circuit, 0]));
    for (const { circuit, waiting } of this.statements.queueLengths.all()) {
      if (circuit in lengths) lengths[circuit] = waiting;
    }
    return lengths;
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
        ...(row.away === 1 || this.presence.isGone(row.contributor_id, now) ? { away: true as const } : {}),
      })),
    );
  }

  /** The contributor's choice of circuits (undefined: every circuit); names no longer configured are dropped. */
  chosenCircuits(contributorId: string): string[] | undefined {
    const row = this.statements.selectionOf.get(contributorId);
    if (!row) return undefined;
    const names = JSON.parse(row.circuits) as unknown;
    return Array.isArray(names) ? this.options.circuits.filter((circuit) => names.includes(circuit)) : undefined;
  }

  /**
   * Refuses unless the contributor holds the live turn (granted, deadline not passed, taken or
   * still in its time to be taken, nothing uploaded yet) for this circuit. Throws circuit.unknown,
   * lobby.already_contributed or
   * lobby.not_your_turn with a message saying where the contributor actually is.
   */
  requireLiveTurn(contributorId: string, circuit: string): TurnRow {
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
      const over = turnOver(turnTimes(turn), now, this.options);
      if (over === 'expired')
        throw notYourTurn(`your turn on ${circuit} expired at ${new Date(turn.deadline).toISOString()}`);
      if (over === 'not_taken')
        throw notYourTurn(
          `your turn on ${circuit} passed to the next in line, a missed turn: it was not started by ` +
            `${new Date(takeBy(turnTimes(turn), this.options)).toISOString()}`,
        );
      // Any request of the holder's for its turn (a heartbeat, an upload's) is a sign of life.
      if (turn.taken_at !== null) this.presence.heard(contributorId, now);
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

  /** The contributor's progress through the circuits; run it in a transaction, for one snapshot. */
  status(contributorId: string): ContributorStatus {
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
        const untaken = turn.taken_at === null ? { takeBy: shownTakeBy(turnTimes(turn), this.options) } : {};
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
        const standbyUntil = current ? this.standbyUntil(current, contributorId, now) : undefined;
        return {
          circuit,
          state: 'waiting',
          position,
          etaMs,
          ...(waiting.eligible_at > now ? { eligibleAt: waiting.eligible_at } : {}),
          ...(standbyUntil !== undefined ? { standbyUntil } : {}),
        };
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

  /**
   * Until when the contributor, waiting in `turn`'s circuit, may take that turn on standby
   * (turn-order.ts mayTakeOnStandby, over the first STANDBY_SCAN_ROWS of the queue); undefined
   * when the rules do not offer it to them now. An entry found gone counts as away here as it does
   * when the turn is taken. Reads only: a status, and the check before a take's transaction.
   */
  standbyUntil(turn: TurnRow, contributorId: string, now: number): number | undefined {
    if (this.options.takePriorityMs <= 0 || turn.state !== 'turn' || turn.taken_at !== null || !this.options.isOpen())
      return;
    const times = turnTimes(turn);
    if (turnOver(times, now, this.options)) return;
    const depth = standbyDepth(turn.started_at, now, this.options);
    if (depth === 0) return;
    const rows = this.statements.queueOfCircuitInOrder.iterate(turn.circuit);
    const line = this.presence.line(rows, now, undefined, STANDBY_SCAN_ROWS);
    return mayTakeOnStandby(line, (entry) => entry.row.contributor_id === contributorId, depth, now)
      ? shownTakeBy(times, this.options)
      : undefined;
  }

  private averageTurnMs(circuit: string): number {
    return this.statements.averageTurn.get(circuit, TURN_SAMPLES)?.average ?? this.options.defaultTurnEstimateMs;
  }

  /** The verifying submission of this contribution; undefined if its outcome is already recorded. */
  verifyingSubmission(contributionId: string): TurnRow | undefined {
    const turn = this.statements.turnOfContribution.get(contributionId);
    if (turn) return turn;
    if (this.statements.historyOfContribution.get(contributionId)) return undefined;
    throw new CoordinatorError('not_found', `no submission ${contributionId} is being verified`);
  }

  /** A choice of circuits checked against the ceremony's and put in its order. */
  inCeremonyOrder(circuits: readonly string[]): string[] {
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
}
