/**
 * The audit's check that turns went in the order the rules promise: it replays the published
 * queue log (core/queue-log/queue-log-entry.ts), its hash chain checked, step by step, keeping each
 * circuit's queue and turn as the lobby kept them, and at every turn granted asks the lobby's own
 * rule (core/queue-log/turn-order.ts, firstInLine) who was first in line, or, for a turn taken on
 * standby, whom the standby rule offered it to (standbyDepth, mayTakeOnStandby). It fails, naming
 * the entries, on:
 *  - `audit.turn_out_of_order`: a turn granted to another than the one the rules put first (FIFO,
 *    away and cooling-down entries passed over), or while the circuit's turn was held; a turn taken
 *    on standby by an entry the rule did not offer it to (turn-order.ts mayTakeOnStandby, over the
 *    queue as it was before the lapse: too far behind the grantee for the time passed, away, or
 *    cooling down);
 *  - `audit.queue_rule_broken`: a step the rules do not allow: an acceptance or a refusal with no
 *    turn in the log, a turn passed on before its time to be taken or missed before its deadline
 *    (or, ended for its client's silence or its upload's want of progress, before that period ran
 *    out), an entry marked away before the presence period ran out, a missed turn not counted (a
 *    turn not taken, left, or refused: every turn ended without a contribution counts, and joining
 *    again resets nothing), a requeue, a removal or a join's first eligible time other than the
 *    rules give (back in place only after a first untaken turn, else at the back after the
 *    cooldown, out at the missed-turn limit, a join past the limit after the doubled cooldown), a
 *    step by someone not where the log put them; a turn taken over on standby (`takenOverBy`)
 *    under rules without standby, before its grantee's priority (takePriorityMs) ran out, after
 *    its time to be taken, once taken, or not followed at once (the same time, nothing in between
 *    but the grantee's requeue or removal, then the `skipped` entry of each entry offered the turn
 *    before the taker, in order, each followed by its own requeue or removal as the rules give) by
 *    the taker's `granted` (its deadline by the rules, no time to be taken: it is taken at once)
 *    and `taken`. An entry back in its place after a turn
 *    it did not take is granted again before the circuit's next turn ended only when nobody else
 *    could be (`audit.turn_out_of_order` otherwise): the loop of two accounts that pass their
 *    turns to each other fails here;
 *  - `audit.queue_log_mismatch`: the log and the transcript disagree: an acceptance naming no link
 *    of the transcript (or another circuit's, position, contributor), a link named twice, a link
 *    with no acceptance (but the last of a chain whose turn is still open at the log's end: its
 *    verdict is recorded just after the transcript commits it).
 * What it cannot see: whether a contributor marked away was really gone (the coordinator's word,
 * with the time it last saw them in the entry), heartbeats and upload bytes (a missed turn is only
 * checked not to end before its first deadline, or, ended for silence or a stalled upload, before
 * the period from the time the coordinator says it last heard from the client or saw progress,
 * itself no earlier than the turn was taken), and whether an `error` verdict was the upload's doing
 * (counted as a missed turn when the entry says so).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { CeremonyConfig } from '../config/ceremony-config.ts';
import { ceremonyPaths } from '../data-folder/ceremony-paths.ts';
import { CoordinatorError, isCoordinatorError, type ErrorCode } from '../errors.ts';
import {
  describeEntry,
  parseQueueLogText,
  QUEUE_LOG_FILE,
  type QueueLogEntry,
  type QueueRules,
  type StepEntry,
} from '../queue-log/queue-log-entry.ts';
import {
  afterMissedTurn,
  eligibleOnJoin,
  firstInLine,
  offeredBefore,
  standbyDepth,
  type LapseConsequence,
  type MissedTurnKind,
} from '../queue-log/turn-order.ts';
import { Transcript, type TranscriptEntry } from '../transcript/transcript.ts';

interface Waiting {
  contributor: string;
  /** The seq of the join that put the entry in line: its place. */
  joinedAt: number;
  away: boolean;
  eligibleAt: number;
  /** Back in its place after a turn it did not take, until the circuit's next turn ends. */
  passedOn: boolean;
}

interface Turn {
  contributor: string;
  granted: Extract<QueueLogEntry, { type: 'granted' }>;
  /** The entry as it waited, for its place when an untaken turn puts it back. */
  entry: Waiting;
  taken: boolean;
  /** When it was taken (ms): its grant when the rules have no time to be taken. */
  takenAt?: number;
}

type Contribution = Extract<TranscriptEntry, { type: 'contribution' }>;
/** The log entry of one step type. */
type EntryOf<T extends StepEntry['type']> = Extract<StepEntry, { type: T }>;

export interface QueueFairnessResult {
  ok: boolean;
  summary: string;
  code?: ErrorCode;
}

const ms = (time: string): number => Date.parse(time);

class Replay {
  private rules: QueueRules | undefined;
  private readonly queues = new Map<string, Waiting[]>();
  private readonly turns = new Map<string, Turn>();
  /** Where each contributor waits, by circuit. */
  private readonly waitingIn = new Map<string, string>();
  private readonly missed = new Map<string, number>();
  /** What a missed turn leads to, checked at the contributor's next step (`optional`: they may have left meanwhile). */
  private readonly afterMiss = new Map<
    string,
    { consequence: LapseConsequence; lapse: StepEntry; optional: boolean }
  >();
  /** Contributors who left while a contribution of theirs was verified, as far as the log shows. */
  private readonly leaving = new Set<string>();
  /** A turn taken on standby (its lapse), until its taker's grant (`granted`) and take follow. */
  private standby:
    | {
        lapse: EntryOf<'lapsed'>;
        by: string;
        granted: boolean;
        /** The entries offered the turn before `by`, in that order: each one's `skipped` comes before the grant. */
        skipping: string[];
        /** The grantee and the entries skipped so far: their own requeue or removal may come in between. */
        missed: Set<string>;
      }
    | undefined;
  /** Transcript links named by an acceptance: hash → entry. */
  readonly accepted = new Map<string, QueueLogEntry>();
  grants = 0;
  /** Of the grants, those of turns taken on standby. */
  standbyGrants = 0;
  /**
   * How far behind its grantee the furthest standby taker was in line (1: next). The rules entry
   * states takePriorityMs, and a short one lets an entry far back take turns: the verdict says how
   * far it went rather than call that order FIFO.
   */
  standbyFurthest = 0;

  constructor(
    private readonly circuits: readonly string[],
    private readonly transcript: ReadonlyMap<string, Contribution>,
  ) {}

  private broken(entry: QueueLogEntry, why: string): CoordinatorError {
    return new CoordinatorError('audit.queue_rule_broken', `${describeEntry(entry)}: ${why}`);
  }

  apply(entry: QueueLogEntry): void {
    const onStandby = this.followStandby(entry);
    if (entry.type === 'rules') {
      const unknown = entry.circuits.filter((c) => !this.circuits.includes(c));
      if (unknown.length > 0 || entry.circuits.length !== this.circuits.length)
        throw new CoordinatorError(
          'audit.queue_log_mismatch',
          `${describeEntry(entry)} states the circuits ${entry.circuits.join(', ')}; ` +
            `the ceremony has ${this.circuits.join(', ')}`,
        );
      this.rules = entry;
      return;
    }
    if (!this.rules) throw this.broken(entry, 'no rules entry states the rules before it');
    const expected = this.afterMiss.get(entry.contributor);
    if (expected) {
      this.afterMiss.delete(entry.contributor);
      this.checkAfterMiss(entry, expected);
    } else if (entry.type === 'join' && entry.via === 'missed')
      throw this.broken(entry, 'a requeue after a missed turn, with no missed turn before it');
    else if (entry.type === 'removed' && entry.reason === 'missed_turns')
      throw this.broken(entry, 'a removal for missed turns, with no missed turn at the limit before it');
    this.step(entry, this.rules, ms(entry.time), onStandby);
  }

  /**
   * After a turn taken over on standby, the taker's `granted` and `taken` follow at the lapse's
   * time, with nothing in between but the grantee's own requeue or removal (what its missed turn
   * leads to, checked as after any). Returns whether `entry` is that grant.
   */
  private followStandby(entry: QueueLogEntry): boolean {
    const pending = this.standby;
    if (!pending) return false;
    const { lapse, by } = pending;
    const sameMoment = entry.type !== 'rules' && entry.circuit === lapse.circuit && ms(entry.time) === ms(lapse.time);
    const ownConsequence =
      sameMoment &&
      pending.missed.has(entry.contributor) &&
      ((entry.type === 'join' && entry.via === 'missed') ||
        (entry.type === 'removed' && entry.reason === 'missed_turns'));
    if (ownConsequence) return false;
    if (pending.skipping.length > 0) {
      const who = pending.skipping[0]!;
      if (!(sameMoment && entry.type === 'skipped' && entry.contributor === who && entry.takenOverBy === by))
        throw this.broken(
          entry,
          `after ${describeEntry(lapse)}, taken over on standby by ${by}, ${who}, offered the turn before ${by}, ` +
            `let it pass: its skipped entry comes next, at the same time (${lapse.time})`,
        );
      pending.skipping.shift();
      pending.missed.add(who);
      return false;
    }
    if (entry.type === 'skipped')
      throw this.broken(entry, `${entry.contributor} was not offered the turn before ${by}, who took it on standby`);
    const next = pending.granted ? 'taken' : 'granted';
    const expected =
      entry.type === next &&
      entry.contributor === by &&
      entry.circuit === lapse.circuit &&
      ms(entry.time) === ms(lapse.time);
    if (!expected)
      throw this.broken(
        entry,
        `after ${describeEntry(lapse)}, taken over on standby by ${by}, ${by}'s ${next} of ${lapse.circuit} ` +
          `comes next, at the same time (${lapse.time})`,
      );
    if (pending.granted) this.standby = undefined;
    else pending.granted = true;
    return next === 'granted';
  }

  /** At the log's end: a turn taken over on standby whose taker's grant or take is missing. */
  finish(): void {
    const pending = this.standby;
    if (pending)
      throw this.broken(
        pending.lapse,
        `taken over on standby by ${pending.by}, whose ${pending.granted ? 'taken' : 'granted'} does not follow ` +
          '(the log ends)',
      );
  }

  private checkAfterMiss(
    entry: StepEntry,
    { consequence, lapse, optional }: { consequence: LapseConsequence; lapse: StepEntry; optional: boolean },
  ): void {
    const requeued = entry.type === 'join' && entry.via === 'missed' && entry.circuit === lapse.circuit;
    const removed = entry.type === 'removed' && entry.reason === 'missed_turns' && entry.circuit === lapse.circuit;
    if (consequence.kind === 'removed' && !removed && !optional)
      throw this.broken(entry, `after ${describeEntry(lapse)} the rules take the entry out of the queue`);
    if (consequence.kind !== 'back_of_queue' && entry.type === 'join' && entry.via === 'missed')
      throw this.broken(entry, `after ${describeEntry(lapse)} the rules do not put the entry at the back of the queue`);
    if (consequence.kind === 'back_of_queue') {
      if (!requeued) throw this.broken(entry, `after ${describeEntry(lapse)} the rules put the entry back in line`);
      const eligibleAt = entry.eligibleAt === undefined ? ms(entry.time) : ms(entry.eligibleAt);
      if (eligibleAt !== consequence.eligibleAt)
        throw this.broken(
          entry,
          `eligible at ${entry.eligibleAt ?? entry.time}, not at the end of the cooldown ` +
            `(${new Date(consequence.eligibleAt).toISOString()})`,
        );
    }
  }

  private queue(circuit: string): Waiting[] {
    let queue = this.queues.get(circuit);
    if (!queue) this.queues.set(circuit, (queue = []));
    return queue;
  }

  private waitingEntry(entry: StepEntry): Waiting {
    const found =
      this.waitingIn.get(entry.contributor) === entry.circuit
        ? this.queue(entry.circuit).find((w) => w.contributor === entry.contributor)
        : undefined;
    if (!found) throw this.broken(entry, `${entry.contributor} is not waiting for ${entry.circuit}`);
    return found;
  }

  private dequeue(waiting: Waiting, circuit: string): void {
    const queue = this.queue(circuit);
    queue.splice(queue.indexOf(waiting), 1);
    this.waitingIn.delete(waiting.contributor);
  }

  private heldTurn(entry: StepEntry, what: string): Turn {
    const turn = this.turns.get(entry.circuit);
    if (!turn || turn.contributor !== entry.contributor)
      throw this.broken(entry, `${what} with no turn of ${entry.contributor} on ${entry.circuit} in the log`);
    return turn;
  }

  private holdsAnything(contributor: string): boolean {
    return this.waitingIn.has(contributor) || [...this.turns.values()].some((t) => t.contributor === contributor);
  }

  /** A taken turn ended for silence: the rules have the period, and it ran out after the turn was taken. */
  private checkSilence(entry: StepEntry, silentSince: string, turn: Turn, rules: QueueRules, at: number): void {
    const silenceMs = rules.turnSilenceMs ?? 0;
    if (silenceMs === 0) throw this.broken(entry, 'a turn ended for silence, which the rules in force do not have');
    if (ms(silentSince) < (turn.takenAt ?? Infinity))
      throw this.broken(entry, `it was last heard from (${silentSince}) before the turn was taken`);
    if (at <= ms(silentSince) + silenceMs)
      throw this.broken(entry, `a turn ended for silence before ${silenceMs} ms had passed since ${silentSince}`);
  }

  /**
   * Passed over, or a turn passed on, because the contributor's presence stream closed at
   * `disconnectedAt`: the rules have the grace, and it ran out. When the stream closed is the
   * coordinator's word, as when a client was last heard from.
   */
  private checkDisconnect(entry: StepEntry, disconnectedAt: string, rules: QueueRules, at: number): void {
    const graceMs = rules.disconnectGraceMs ?? 0;
    if (graceMs === 0)
      throw this.broken(entry, 'it names a closed presence stream, which the rules in force do not count');
    if (at <= ms(disconnectedAt) + graceMs)
      throw this.broken(entry, `it came before ${graceMs} ms had passed since the stream closed (${disconnectedAt})`);
  }

  /** `onStandby`: the grant of a turn taken over on standby (followStandby). */
  private step(entry: StepEntry, rules: QueueRules, at: number, onStandby: boolean): void {
    if (!rules.circuits.includes(entry.circuit))
      throw this.broken(entry, `${entry.circuit} is not a circuit of the ceremony`);
    switch (entry.type) {
      case 'join':
        this.onJoin(entry, rules, at);
        return;
      case 'away':
        this.onAway(entry, rules, at);
        return;
      case 'back':
        this.onBack(entry);
        return;
      case 'granted':
        this.onGranted(entry, rules, at, onStandby);
        return;
      case 'taken':
        this.onTaken(entry, at);
        return;
      case 'lapsed':
        this.onLapsed(entry, rules, at);
        return;
      case 'skipped':
        this.onSkipped(entry, rules, at);
        return;
      case 'refused':
        this.onRefused(entry, rules, at);
        return;
      case 'accepted':
        this.onAccepted(entry);
        return;
      case 'left':
        this.onLeft(entry, rules, at);
        return;
      case 'removed':
        this.onRemoved(entry);
        return;
    }
  }

  private missedIn(contributor: string, circuit: string): number {
    return this.missed.get(`${contributor}\n${circuit}`) ?? 0;
  }

  /** Counts a missed turn of the entry's contributor in its circuit; the entry must state the count. */
  private countMiss(entry: StepEntry & { missedTurns?: number }): number {
    const key = `${entry.contributor}\n${entry.circuit}`;
    const missed = (this.missed.get(key) ?? 0) + 1;
    this.missed.set(key, missed);
    if (entry.missedTurns !== missed)
      throw this.broken(
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
  private expectAfterMiss(entry: StepEntry, kind: MissedTurnKind, missed: number, rules: QueueRules, at: number) {
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
  private turnEnded(circuit: string): void {
    this.turns.delete(circuit);
    for (const waiting of this.queue(circuit)) waiting.passedOn = false;
  }

  private onJoin(entry: EntryOf<'join'>, rules: QueueRules, at: number): void {
    if (this.holdsAnything(entry.contributor))
      throw this.broken(entry, `${entry.contributor} joins while already in line or holding a turn`);
    if (entry.via === 'join' || entry.via === 'choice') this.leaving.delete(entry.contributor);
    const eligibleAt = entry.eligibleAt === undefined ? at : ms(entry.eligibleAt);
    // After a missed turn its cooldown (checked as the miss's consequence); else the rule of a join.
    if (entry.via !== 'missed') {
      const missed = this.missedIn(entry.contributor, entry.circuit);
      const due = eligibleOnJoin(missed, at, rules);
      if (eligibleAt !== due)
        throw this.broken(
          entry,
          `eligible at ${new Date(eligibleAt).toISOString()}, not when the rules let this join be ` +
            `(${new Date(due).toISOString()}, after ${missed} missed turns in ${entry.circuit})`,
        );
    }
    const queue = this.queue(entry.circuit);
    queue.push({ contributor: entry.contributor, joinedAt: entry.seq, away: false, eligibleAt, passedOn: false });
    this.waitingIn.set(entry.contributor, entry.circuit);
    if (entry.position !== queue.length)
      throw this.broken(entry, `it gives position ${entry.position}; the log puts the entry at ${queue.length}`);
  }

  private onAway(entry: EntryOf<'away'>, rules: QueueRules, at: number): void {
    const waiting = this.waitingEntry(entry);
    if (entry.disconnectedAt !== undefined) this.checkDisconnect(entry, entry.disconnectedAt, rules, at);
    else if (rules.presenceMs === 0 || at - ms(entry.seenAt) <= rules.presenceMs)
      throw this.broken(
        entry,
        `marked away when last seen ${at - ms(entry.seenAt)} ms before, not more than the presence period ` +
          `(${rules.presenceMs} ms)`,
      );
    waiting.away = true;
  }

  private onBack(entry: EntryOf<'back'>): void {
    this.waitingEntry(entry).away = false;
  }

  /**
   * A turn granted: to the first in line (firstInLine), or, `onStandby`, to the one who took it
   * over (checked at the lapse by the standby rule), taken at once: no time to be taken.
   */
  private onGranted(entry: EntryOf<'granted'>, rules: QueueRules, at: number, onStandby: boolean): void {
    const held = this.turns.get(entry.circuit);
    if (held)
      throw new CoordinatorError(
        'audit.turn_out_of_order',
        `${describeEntry(entry)} grants ${entry.circuit} while ${held.contributor} holds its turn ` +
          `(${describeEntry(held.granted)})`,
      );
    const waiting = this.waitingEntry(entry);
    if (!onStandby) this.checkFirstInLine(entry, waiting, at);
    const deadline = at + Math.min(rules.turnTimeoutMs, rules.maxTurnMs);
    const takeBy = rules.takeTurnMs > 0 && !onStandby ? at + rules.takeTurnMs : undefined;
    if (ms(entry.deadline) !== deadline || (entry.takeBy === undefined ? undefined : ms(entry.takeBy)) !== takeBy)
      throw this.broken(
        entry,
        'its deadline or time to be taken is not what the rules give' +
          (onStandby ? ' (a turn taken on standby is taken at once: it has no time to be taken)' : ''),
      );
    this.dequeue(waiting, entry.circuit);
    // A turn taken on standby is taken by the `taken` that follows.
    const taken = !onStandby && !takeBy;
    this.turns.set(entry.circuit, {
      contributor: entry.contributor,
      granted: entry,
      entry: waiting,
      taken,
      ...(taken ? { takenAt: at } : {}),
    });
    this.grants++;
    if (onStandby) this.standbyGrants++;
  }

  private checkFirstInLine(entry: EntryOf<'granted'>, waiting: Waiting, at: number): void {
    const first = firstInLine(this.queue(entry.circuit), at);
    if (first !== waiting) {
      const who = !first
        ? `${entry.contributor} was not eligible (away, or cooling down until ` +
          `${new Date(waiting.eligibleAt).toISOString()})`
        : waiting.passedOn && !first.passedOn
          ? `${entry.contributor} passed on its last turn here and the circuit's next turn has not ended, ` +
            `while ${first.contributor} (in line since entry ${first.joinedAt}) could take this one`
          : `${first.contributor} (in line since entry ${first.joinedAt}, present and eligible) was first in line`;
      throw new CoordinatorError(
        'audit.turn_out_of_order',
        `${describeEntry(entry)} gives the turn to ${entry.contributor}, but ${who}`,
      );
    }
  }

  private onTaken(entry: EntryOf<'taken'>, at: number): void {
    const turn = this.heldTurn(entry, 'taken');
    if (turn.taken) throw this.broken(entry, 'the turn was already taken');
    if (turn.granted.takeBy !== undefined && at > ms(turn.granted.takeBy))
      throw this.broken(entry, `taken after its time to be taken (${turn.granted.takeBy})`);
    turn.taken = true;
    turn.takenAt = at;
  }

  /**
   * A turn ended unused, a missed turn: passed on if never taken (or taken over on standby), else
   * lapsed; what follows is the rules'.
   */
  private onLapsed(entry: EntryOf<'lapsed'>, rules: QueueRules, at: number): void {
    const turn = this.heldTurn(entry, 'a lapse');
    // Over the queue as it was: the turn's end below makes the entries passed on eligible again.
    if (entry.takenOverBy !== undefined) this.checkTakeover(entry, entry.takenOverBy, turn, rules, at);
    this.turnEnded(entry.circuit);
    if (entry.taken !== turn.taken)
      throw this.broken(entry, `it says the turn was ${entry.taken ? '' : 'not '}taken; the log says otherwise`);
    if (entry.takenOverBy !== undefined) {
      if (entry.disconnectedAt !== undefined) this.checkDisconnect(entry, entry.disconnectedAt, rules, at);
    } else if (!entry.taken) {
      const due = Math.min(ms(turn.granted.takeBy ?? turn.granted.deadline), ms(turn.granted.deadline));
      if (entry.disconnectedAt !== undefined) this.checkDisconnect(entry, entry.disconnectedAt, rules, at);
      else if (at <= due) throw this.broken(entry, `the turn passed on before its time to be taken ran out`);
    } else this.checkTakenLapse(entry, turn, rules, at);
    const missed = this.countMiss(entry);
    const consequence = this.expectAfterMiss(entry, entry.taken ? 'lapsed' : 'not_taken', missed, rules, at);
    if (consequence.kind !== 'back_in_place') return;
    // Back in its place, away until seen, passed on until the circuit's next turn ends.
    const queue = this.queue(entry.circuit);
    const place = queue.findIndex((w) => w.joinedAt > turn.entry.joinedAt);
    Object.assign(turn.entry, { away: true, eligibleAt: at, passedOn: true });
    queue.splice(place < 0 ? queue.length : place, 0, turn.entry);
    this.waitingIn.set(entry.contributor, entry.circuit);
  }

  /**
   * A turn not taken, taken over on standby by `by` (turn-order.ts): the rules have standby, the
   * grantee's priority ran out and its time to be taken did not, and `by` waited among the entries
   * the rule offered the turn to by then, by mayTakeOnStandby (the lobby's own) over the queue as
   * it was. Its grant and take are checked as they follow (followStandby).
   */
  private checkTakeover(entry: EntryOf<'lapsed'>, by: string, turn: Turn, rules: QueueRules, at: number): void {
    const priorityMs = rules.takePriorityMs ?? 0;
    if (priorityMs === 0)
      throw this.broken(entry, `a turn taken over on standby by ${by}, which the rules in force do not have`);
    if (entry.taken || turn.taken)
      throw this.broken(entry, `a turn taken over on standby by ${by}; only a turn not yet taken can be`);
    const grantedAt = ms(turn.granted.time);
    const due = turn.granted.takeBy ?? turn.granted.deadline;
    if (at > Math.min(ms(due), ms(turn.granted.deadline)))
      throw this.broken(entry, `taken over on standby by ${by} after its time to be taken ran out (${due})`);
    const depth = standbyDepth(grantedAt, at, priorityMs);
    if (depth < 1)
      throw this.broken(
        entry,
        `taken over on standby by ${by} ${at - grantedAt} ms after its grant, before the grantee's priority ` +
          `(${priorityMs} ms) ran out`,
      );
    const queue = this.queue(entry.circuit);
    const waiting = this.waitingIn.get(by) === entry.circuit ? queue.find((w) => w.contributor === by) : undefined;
    if (!waiting) throw this.broken(entry, `${by}, who took the turn over on standby, is not waiting for it`);
    const before = offeredBefore(queue, (w) => w === waiting, depth, at);
    if (!before) {
      const why = waiting.away
        ? `${by} was away`
        : waiting.eligibleAt > at
          ? `${by} was cooling down until ${new Date(waiting.eligibleAt).toISOString()}`
          : `${by} was not among the first ${depth} in line by the rules (FIFO, away and cooling-down entries ` +
            'passed over, entries passed on after the others)';
      throw new CoordinatorError(
        'audit.turn_out_of_order',
        `${describeEntry(entry)} has ${by} take the turn on standby ${at - grantedAt} ms after its grant, but ${why}`,
      );
    }
    this.standbyFurthest = Math.max(this.standbyFurthest, before.length + 1);
    this.standby = {
      lapse: entry,
      by,
      granted: false,
      skipping: before.map((w) => w.contributor),
      missed: new Set([entry.contributor]),
    };
  }

  /**
   * A waiting entry offered a turn on standby before the one who took it let it pass (its order
   * and time checked by followStandby): a missed turn, not taken, with the grantee's consequence:
   * passed on in its place the first time, else at the back (its `join` follows) or out.
   */
  private onSkipped(entry: EntryOf<'skipped'>, rules: QueueRules, at: number): void {
    if (!this.standby) throw this.broken(entry, 'a turn let pass with no turn taken over on standby before it');
    const waiting = this.waitingEntry(entry);
    const missed = this.countMiss(entry);
    const consequence = this.expectAfterMiss(entry, 'not_taken', missed, rules, at);
    // Out of the queue: by its requeue's `join` next (so dequeued here), or by its `removed`.
    if (consequence.kind === 'back_in_place') waiting.passedOn = true;
    else if (consequence.kind === 'back_of_queue') this.dequeue(waiting, entry.circuit);
  }

  /** A taken turn's lapse came no sooner than the rule it names (deadline, silence, closed stream, upload) allows. */
  private checkTakenLapse(entry: EntryOf<'lapsed'>, turn: Turn, rules: QueueRules, at: number): void {
    if (entry.disconnectedAt !== undefined) this.checkDisconnect(entry, entry.disconnectedAt, rules, at);
    else if (entry.silentSince !== undefined) this.checkSilence(entry, entry.silentSince, turn, rules, at);
    else if (entry.uploadDue !== undefined) {
      if (rules.uploadStartMs === 0)
        throw this.broken(entry, 'a turn ended for want of an upload, which the rules in force do not have');
      if (ms(entry.uploadDue) !== ms(turn.granted.time) + rules.uploadStartMs)
        throw this.broken(
          entry,
          `its upload was due ${rules.uploadStartMs} ms after the grant, not at ${entry.uploadDue}`,
        );
      if (at <= ms(entry.uploadDue))
        throw this.broken(entry, `it ended before its upload was due (${entry.uploadDue})`);
    } else if (entry.uploadStalledSince !== undefined) {
      const since = entry.uploadStalledSince;
      if (rules.uploadStallMs === 0)
        throw this.broken(entry, 'a turn ended for a stalled upload, which the rules in force do not have');
      if (ms(since) < (turn.takenAt ?? Infinity))
        throw this.broken(entry, `its upload's last progress (${since}) came before the turn was taken`);
      if (at <= ms(since) + rules.uploadStallMs)
        throw this.broken(
          entry,
          `a turn ended for a stalled upload before ${rules.uploadStallMs} ms had passed since ${since}`,
        );
    } else if (at <= ms(turn.granted.deadline)) throw this.broken(entry, 'a missed turn before its deadline');
  }

  /** A verdict but an acceptance: a refusal is a missed turn, an error may be (the upload's), a discard is not. */
  private onRefused(entry: EntryOf<'refused'>, rules: QueueRules, at: number): void {
    this.heldTurn(entry, 'a refusal');
    this.turnEnded(entry.circuit);
    const counted = entry.outcome === 'refused' || (entry.outcome === 'error' && entry.missedTurns !== undefined);
    if (entry.outcome === 'discarded' && entry.missedTurns !== undefined)
      throw this.broken(entry, 'it counts a discarded contribution (no longer fitting the chain) as a missed turn');
    if (counted) this.expectAfterMiss(entry, 'refused', this.countMiss(entry), rules, at);
    this.leaving.delete(entry.contributor);
  }

  private onAccepted(entry: EntryOf<'accepted'>): void {
    this.heldTurn(entry, 'an acceptance');
    this.turnEnded(entry.circuit);
    this.leaving.delete(entry.contributor);
    const link = this.transcript.get(entry.transcriptHash);
    const mismatch = !link
      ? 'names no contribution of the transcript'
      : link.circuit !== entry.circuit || link.index !== entry.index
        ? `names the transcript's ${link.circuit} #${link.index}, not ${entry.circuit} #${entry.index}`
        : link.contributor !== entry.name
          ? `names a contribution the transcript gives to ${link.contributor}, not ${entry.name}`
          : this.accepted.has(entry.transcriptHash)
            ? `names the link ${describeEntry(this.accepted.get(entry.transcriptHash)!)} already names`
            : undefined;
    if (mismatch) throw new CoordinatorError('audit.queue_log_mismatch', `${describeEntry(entry)} ${mismatch}`);
    this.accepted.set(entry.transcriptHash, entry);
  }

  private onLeft(entry: EntryOf<'left'>, rules: QueueRules, at: number): void {
    if (entry.from === 'waiting') this.dequeue(this.waitingEntry(entry), entry.circuit);
    else if (entry.from === 'turn') {
      this.heldTurn(entry, 'leaving a turn');
      this.turnEnded(entry.circuit);
      this.expectAfterMiss(entry, 'left', this.countMiss(entry), rules, at);
    } else {
      this.heldTurn(entry, 'leaving after the verdict');
      this.leaving.add(entry.contributor);
    }
  }

  private onRemoved(entry: EntryOf<'removed'>): void {
    if (this.waitingIn.get(entry.contributor) === entry.circuit) {
      this.dequeue(this.waitingEntry(entry), entry.circuit);
    } else if (this.turns.get(entry.circuit)?.contributor === entry.contributor) {
      this.turnEnded(entry.circuit);
    } else if (entry.reason !== 'missed_turns') {
      throw this.broken(entry, `${entry.contributor} is neither waiting for nor holding ${entry.circuit}`);
    }
  }

  /** The circuits whose turn is still held at the end of the log. */
  openTurns(): Set<string> {
    return new Set(this.turns.keys());
  }
}

/**
 * Replays `log` against `transcript` (both already hash-checked) and the ceremony's circuits;
 * throws the first problem (see the header). Returns what it checked, in words.
 */
export function checkQueueFairness(
  config: { circuits: ReadonlyArray<{ name: string }> },
  log: readonly QueueLogEntry[],
  transcript: readonly TranscriptEntry[],
): string {
  const links = new Map<string, Contribution>();
  for (const entry of transcript) if (entry.type === 'contribution') links.set(entry.hash, entry);
  const replay = new Replay(
    config.circuits.map((c) => c.name),
    links,
  );
  for (const entry of log) replay.apply(entry);
  replay.finish();
  const open = replay.openTurns();
  for (const circuit of config.circuits) {
    const chain = transcript.filter((e): e is Contribution => e.type === 'contribution' && e.circuit === circuit.name);
    for (const [i, link] of chain.entries()) {
      if (replay.accepted.has(link.hash)) continue;
      if (i === chain.length - 1 && open.has(circuit.name)) continue; // its verdict follows the commit
      throw new CoordinatorError(
        'audit.queue_log_mismatch',
        `the transcript's ${circuit.name} #${link.index} (entry ${link.seq}, by ${link.contributor}) has no ` +
          'acceptance in the queue log',
      );
    }
  }
  const steps = log.length;
  return (
    `${steps} entries, hash chain intact; ${replay.grants} turns granted, each to the first in line by the ` +
    'rules (FIFO per circuit, away and cooling-down entries passed over)' +
    (replay.standbyGrants > 0
      ? ` or, ${replay.standbyGrants} of them, taken on standby by an entry the standby rule offered it to ` +
        `(at most ${replay.standbyFurthest} behind its grantee, by the stated takePriorityMs)`
      : '') +
    `, ${replay.accepted.size} acceptances ` +
    'matching the transcript, every turn ended without a contribution counted as missed; presence, heartbeats ' +
    'and upload progress are the coordinator’s word (each away entry says when it last saw them)'
  );
}

/**
 * The audit's finding on the queue log of the ceremony in `config.dataDir` (its published
 * transcript/queue-log.jsonl, checked against the transcript there). A publication without it fails
 * (`audit.queue_log_missing`): the order of turns is not checked on the coordinator's say-so, only
 * when the auditor states the ceremony had no lobby (`noQueueLog`), and the finding then says the
 * order was NOT checked. Never throws: a failure is the finding.
 */
export async function queueLogFinding(
  config: CeremonyConfig,
  { noQueueLog = false }: { noQueueLog?: boolean } = {},
): Promise<{ subject: string; ok: boolean; summary: string; code?: ErrorCode }> {
  const subject = 'queue log';
  const failed = (code: ErrorCode, message: string) => ({ subject, ok: false, summary: `[${code}] ${message}`, code });
  let text: string;
  try {
    text = await readFile(path.join(config.dataDir, QUEUE_LOG_FILE), 'utf8');
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    if (why !== 'ENOENT') return failed('queue_log.corrupt', `${QUEUE_LOG_FILE} could not be read (${why})`);
    if (noQueueLog)
      return {
        subject,
        ok: true,
        summary:
          `no ${QUEUE_LOG_FILE} published, and --no-queue-log says the ceremony had none (made without the ` +
          "coordinator's lobby): the order of turns is NOT checked",
      };
    return failed(
      'audit.queue_log_missing',
      `no ${QUEUE_LOG_FILE} published: the order of turns cannot be checked. A ceremony run by the coordinator ` +
        'has one; for a ceremony made without its lobby, say so with --no-queue-log',
    );
  }
  try {
    const log = parseQueueLogText(config.id, text, QUEUE_LOG_FILE);
    const transcript = await Transcript.load(ceremonyPaths(config.dataDir).transcriptPath, config.id);
    return { subject, ok: true, summary: checkQueueFairness(config, log, transcript.entries) };
  } catch (error) {
    if (!isCoordinatorError(error)) throw error;
    return failed(error.code, error.message);
  }
}
