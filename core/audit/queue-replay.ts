/**
 * The audit's replay of the queue log, one entry at a time (check-queue-fairness.ts says what it
 * checks): each step is checked against the rules in force and applied to the state
 * (queue-replay-state.ts), each costing O(log n) in the queue's length.
 */
import { CoordinatorError } from '../errors.ts';
import { describeEntry, type QueueLogEntry, type QueueRules, type StepEntry } from '../queue-log/queue-log-entry.ts';
import { eligibleOnJoin } from '../queue-log/turn-order.ts';
import { checkAfterMiss, checkDisconnect, checkTakenLapse } from './queue-replay-checks.ts';
import { checkTakeover, finishStandby, followStandby, onSkipped } from './queue-replay-standby.ts';
import { broken, clip, ms, ReplayState, type EntryOf, type Waiting } from './queue-replay-state.ts';

export class Replay extends ReplayState {
  apply(entry: QueueLogEntry): void {
    const onStandby = followStandby(this, entry);
    if (entry.type === 'rules') {
      const unknown = entry.circuits.filter((c) => !this.circuitSet.has(c));
      if (unknown.length > 0 || entry.circuits.length !== this.circuits.length)
        throw new CoordinatorError(
          'audit.queue_log_mismatch',
          `${describeEntry(entry)} states the circuits ${clip(entry.circuits.join(', '))}; ` +
            `the ceremony has ${this.circuits.join(', ')}`,
        );
      this.rules = entry;
      return;
    }
    if (!this.rules) throw broken(entry, 'no rules entry states the rules before it');
    const expected = this.afterMiss.get(entry.contributor);
    if (expected) {
      this.afterMiss.delete(entry.contributor);
      checkAfterMiss(entry, expected);
    } else if (entry.type === 'join' && entry.via === 'missed')
      throw broken(entry, 'a requeue after a missed turn, with no missed turn before it');
    else if (entry.type === 'removed' && entry.reason === 'missed_turns')
      throw broken(entry, 'a removal for missed turns, with no missed turn at the limit before it');
    this.step(entry, this.rules, ms(entry.time), onStandby);
  }

  /** At the log's end: a turn taken over on standby whose taker's grant or take is missing. */
  finish(): void {
    finishStandby(this);
  }

  /** `onStandby`: the grant of a turn taken over on standby (followStandby). */
  private step(entry: StepEntry, rules: QueueRules, at: number, onStandby: boolean): void {
    if (!rules.circuits.includes(entry.circuit))
      throw broken(entry, `${entry.circuit} is not a circuit of the ceremony`);
    switch (entry.type) {
      case 'join':
        return this.onJoin(entry, rules, at);
      case 'away':
        return this.onAway(entry, rules, at);
      case 'back':
        return this.line(entry.circuit).change(this.waitingEntry(entry), { away: false });
      case 'granted':
        return this.onGranted(entry, rules, at, onStandby);
      case 'taken':
        return this.onTaken(entry, at);
      case 'lapsed':
        return this.onLapsed(entry, rules, at);
      case 'skipped':
        return onSkipped(this, entry, rules, at);
      case 'refused':
        return this.onRefused(entry, rules, at);
      case 'accepted':
        return this.onAccepted(entry);
      case 'left':
        return this.onLeft(entry, rules, at);
      case 'removed':
        return this.onRemoved(entry);
    }
  }

  private onJoin(entry: EntryOf<'join'>, rules: QueueRules, at: number): void {
    if (this.holdsAnything(entry.contributor))
      throw broken(entry, `${entry.contributor} joins while already in line or holding a turn`);
    if (entry.via === 'join' || entry.via === 'choice') this.leaving.delete(entry.contributor);
    const eligibleAt = entry.eligibleAt === undefined ? at : ms(entry.eligibleAt);
    // After a missed turn its cooldown (checked as the miss's consequence); else the rule of a join.
    if (entry.via !== 'missed') {
      const missed = this.missedIn(entry.contributor, entry.circuit);
      const due = eligibleOnJoin(missed, at, rules);
      if (eligibleAt !== due)
        throw broken(
          entry,
          `eligible at ${new Date(eligibleAt).toISOString()}, not when the rules let this join be ` +
            `(${new Date(due).toISOString()}, after ${missed} missed turns in ${entry.circuit})`,
        );
    }
    const { contributor, circuit } = entry;
    this.enqueue({ contributor, circuit, joinedAt: entry.seq, away: false, eligibleAt, passedOn: false });
    const length = this.line(circuit).length;
    if (entry.position !== length)
      throw broken(entry, `it gives position ${entry.position}; the log puts the entry at ${length}`);
  }

  private onAway(entry: EntryOf<'away'>, rules: QueueRules, at: number): void {
    const waiting = this.waitingEntry(entry);
    if (entry.disconnectedAt !== undefined) checkDisconnect(entry, entry.disconnectedAt, rules, at);
    else if (rules.presenceMs === 0 || at - ms(entry.seenAt) <= rules.presenceMs)
      throw broken(
        entry,
        `marked away when last seen ${at - ms(entry.seenAt)} ms before, not more than the presence period ` +
          `(${rules.presenceMs} ms)`,
      );
    this.line(entry.circuit).change(waiting, { away: true });
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
      throw broken(
        entry,
        'its deadline or time to be taken is not what the rules give' +
          (onStandby ? ' (a turn taken on standby is taken at once: it has no time to be taken)' : ''),
      );
    this.dequeue(waiting);
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
    const first = this.line(entry.circuit).firstInLine(at);
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
    if (turn.taken) throw broken(entry, 'the turn was already taken');
    if (turn.granted.takeBy !== undefined && at > ms(turn.granted.takeBy))
      throw broken(entry, `taken after its time to be taken (${turn.granted.takeBy})`);
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
    if (entry.takenOverBy !== undefined) checkTakeover(this, entry, entry.takenOverBy, turn, rules, at);
    this.turnEnded(entry.circuit);
    if (entry.taken !== turn.taken)
      throw broken(entry, `it says the turn was ${entry.taken ? '' : 'not '}taken; the log says otherwise`);
    if (entry.takenOverBy !== undefined) {
      if (entry.disconnectedAt !== undefined) checkDisconnect(entry, entry.disconnectedAt, rules, at);
    } else if (!entry.taken) {
      const due = Math.min(ms(turn.granted.takeBy ?? turn.granted.deadline), ms(turn.granted.deadline));
      if (entry.disconnectedAt !== undefined) checkDisconnect(entry, entry.disconnectedAt, rules, at);
      else if (at <= due) throw broken(entry, `the turn passed on before its time to be taken ran out`);
    } else checkTakenLapse(entry, turn, rules, at);
    const missed = this.countMiss(entry);
    const consequence = this.expectAfterMiss(entry, entry.taken ? 'lapsed' : 'not_taken', missed, rules, at);
    if (consequence.kind !== 'back_in_place') return;
    // Back in its place (its slot: its join's order), away until seen, passed on until the circuit's next turn ends.
    this.line(entry.circuit).change(turn.entry, { away: true, eligibleAt: at, passedOn: true });
    this.enqueue(turn.entry);
  }

  /** A verdict but an acceptance: a refusal is a missed turn, an error may be (the upload's), a discard is not. */
  private onRefused(entry: EntryOf<'refused'>, rules: QueueRules, at: number): void {
    this.heldTurn(entry, 'a refusal');
    this.turnEnded(entry.circuit);
    const counted = entry.outcome === 'refused' || (entry.outcome === 'error' && entry.missedTurns !== undefined);
    if (entry.outcome === 'discarded' && entry.missedTurns !== undefined)
      throw broken(entry, 'it counts a discarded contribution (no longer fitting the chain) as a missed turn');
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
    if (entry.from === 'waiting') this.dequeue(this.waitingEntry(entry));
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
    const waiting = this.waitingFor(entry.contributor, entry.circuit);
    if (waiting) this.dequeue(waiting);
    else if (this.turns.get(entry.circuit)?.contributor === entry.contributor) this.turnEnded(entry.circuit);
    else if (entry.reason !== 'missed_turns')
      throw broken(entry, `${entry.contributor} is neither waiting for nor holding ${entry.circuit}`);
  }
}
