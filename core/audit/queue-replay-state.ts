/**
 * What the audit's replay of the queue log (check-queue-fairness.ts) keeps between steps: each
 * circuit's waiting line (waiting-line.ts: indexed, so no step walks a queue), the turns held, the
 * missed turns counted, and what a missed turn leads to. Every lookup is by map: a step costs
 * O(log n) in the queue's length, whatever log the coordinator publishes.
 */
import { CoordinatorError } from '../errors.ts';
import { describeEntry, type QueueLogEntry, type QueueRules, type StepEntry } from '../queue-log/queue-log-entry.ts';
import { afterMissedTurn, type LapseConsequence, type MissedTurnKind } from '../queue-log/turn-order.ts';
import type { TranscriptEntry } from '../transcript/transcript.ts';
import { WaitingLine, type Slotted } from './waiting-line.ts';

export interface Waiting extends Slotted {
  contributor: string;
  circuit: string;
  /** The seq of the join that put the entry in line: its place. */
  joinedAt: number;
}

export interface Turn {
  contributor: string;
  granted: Extract<QueueLogEntry, { type: 'granted' }>;
  /** The entry as it waited, for its place when an untaken turn puts it back. */
  entry: Waiting;
  taken: boolean;
  /** When it was taken (ms): its grant when the rules have no time to be taken. */
  takenAt?: number;
}

export type Contribution = Extract<TranscriptEntry, { type: 'contribution' }>;
/** The log entry of one step type. */
export type EntryOf<T extends StepEntry['type']> = Extract<StepEntry, { type: T }>;

/** What a missed turn leads to, checked at the contributor's next step. */
export interface AfterMiss {
  consequence: LapseConsequence;
  lapse: StepEntry;
  /** They may have left meanwhile. */
  optional: boolean;
}

/** A turn taken on standby (its lapse), until its taker's grant (`granted`) and take follow. */
export interface PendingStandby {
  lapse: EntryOf<'lapsed'>;
  by: string;
  granted: boolean;
  /** The entries offered the turn before `by`, in that order: each one's `skipped` comes before the grant. */
  skipping: string[];
  /** How many of `skipping` have had their `skipped` (an index, not a shift: k skips cost k steps). */
  skipped: number;
  /** The grantee and the entries skipped so far: their own requeue or removal may come in between. */
  missed: Set<string>;
}

export const ms = (time: string): number => Date.parse(time);

/** Longest text of the log quoted in a message: a crafted log cannot make the audit's verdict unbounded. */
const QUOTE_MAX = 300;

/** `text`, cut to QUOTE_MAX characters with the number cut said. */
export function clip(text: string, max = QUOTE_MAX): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

export function broken(entry: QueueLogEntry, why: string): CoordinatorError {
  return new CoordinatorError('audit.queue_rule_broken', `${describeEntry(entry)}: ${why}`);
}

export class ReplayState {
  rules: QueueRules | undefined;
  private readonly lines = new Map<string, WaitingLine<Waiting>>();
  readonly turns = new Map<string, Turn>();
  /** Where each contributor waits (one place at most: a join while in line fails). */
  private readonly waitingIn = new Map<string, Waiting>();
  private readonly missed = new Map<string, number>();
  readonly afterMiss = new Map<string, AfterMiss>();
  /** Contributors who left while a contribution of theirs was verified, as far as the log shows. */
  readonly leaving = new Set<string>();
  standby: PendingStandby | undefined;
  /** Transcript links named by an acceptance: hash → entry. */
  readonly accepted = new Map<string, QueueLogEntry>();
  grants = 0;
  /** Of the grants, those of turns taken on standby. */
  standbyGrants = 0;
  /**
   * How far behind its grantee the furthest standby taker was in line (1: next). The rules entry
   * states takePriorityMs and standbyStepMs, and short ones let an entry far back take turns: the
   * verdict says how far it went rather than call that order FIFO.
   */
  standbyFurthest = 0;
  protected readonly circuitSet: ReadonlySet<string>;

  constructor(
    protected readonly circuits: readonly string[],
    protected readonly transcript: ReadonlyMap<string, Contribution>,
  ) {
    this.circuitSet = new Set(circuits);
  }

  line(circuit: string): WaitingLine<Waiting> {
    let line = this.lines.get(circuit);
    if (!line) this.lines.set(circuit, (line = new WaitingLine()));
    return line;
  }

  /** The contributor's entry waiting in `circuit`, or undefined. */
  waitingFor(contributor: string, circuit: string): Waiting | undefined {
    const waiting = this.waitingIn.get(contributor);
    return waiting?.circuit === circuit ? waiting : undefined;
  }

  waitingEntry(entry: StepEntry): Waiting {
    const found = this.waitingFor(entry.contributor, entry.circuit);
    if (!found) throw broken(entry, `${entry.contributor} is not waiting for ${entry.circuit}`);
    return found;
  }

  /** Puts `waiting` in its circuit's line: at the back (a join) or, with a slot, back in its place. */
  enqueue(waiting: Omit<Waiting, 'slot'> | Waiting): Waiting {
    const line = this.line(waiting.circuit);
    const placed = 'slot' in waiting ? (line.insert(waiting), waiting) : line.join(waiting);
    this.waitingIn.set(placed.contributor, placed);
    return placed;
  }

  dequeue(waiting: Waiting): void {
    this.line(waiting.circuit).remove(waiting);
    this.waitingIn.delete(waiting.contributor);
  }

  heldTurn(entry: StepEntry, what: string): Turn {
    const turn = this.turns.get(entry.circuit);
    if (!turn || turn.contributor !== entry.contributor)
      throw broken(entry, `${what} with no turn of ${entry.contributor} on ${entry.circuit} in the log`);
    return turn;
  }

  /** In line or holding a turn (the turns are one a circuit: the ceremony's few). */
  holdsAnything(contributor: string): boolean {
    return this.waitingIn.has(contributor) || [...this.turns.values()].some((t) => t.contributor === contributor);
  }

  missedIn(contributor: string, circuit: string): number {
    return this.missed.get(`${contributor}\n${circuit}`) ?? 0;
  }

  /** Counts a missed turn of the entry's contributor in its circuit; the entry must state the count. */
  countMiss(entry: StepEntry & { missedTurns?: number }): number {
    const key = `${entry.contributor}\n${entry.circuit}`;
    const missed = (this.missed.get(key) ?? 0) + 1;
    this.missed.set(key, missed);
    if (entry.missedTurns !== missed)
      throw broken(
        entry,
        `it counts ${entry.missedTurns ?? 'no'} missed turns; the log counts ${missed} (every turn ended ` +
          'without a contribution is one, and joining again resets nothing)',
      );
    return missed;
  }

  /**
   * What a missed turn leads to, checked at the contributor's next step (back in place: done here;
   * a refusal's requeue, which may be in another circuit chosen meanwhile, is checked as a join).
   */
  expectAfterMiss(entry: StepEntry, kind: MissedTurnKind, missed: number, rules: QueueRules, at: number) {
    const consequence = afterMissedTurn(kind, missed, at, rules);
    if (consequence.kind === 'out' || (kind === 'refused' && consequence.kind !== 'removed')) return consequence;
    if (consequence.kind !== 'back_in_place')
      this.afterMiss.set(entry.contributor, {
        consequence,
        lapse: entry,
        optional: this.leaving.has(entry.contributor),
      });
    return consequence;
  }

  /** A turn of `circuit` ended: the entries passed on waited for it, and are eligible again. */
  turnEnded(circuit: string): void {
    this.turns.delete(circuit);
    this.line(circuit).endTurn();
  }

  /** The circuits whose turn is still held at the end of the log. */
  openTurns(): Set<string> {
    return new Set(this.turns.keys());
  }
}
