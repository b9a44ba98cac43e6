/**
 * The audit replay's checks of when a turn may end and what a missed turn leads to
 * (check-queue-fairness.ts): each a constant-time comparison of the entry with the rules in force.
 */
import { describeEntry, type QueueRules, type StepEntry } from '../queue-log/queue-log-entry.ts';
import { broken, ms, type AfterMiss, type EntryOf, type Turn } from './queue-replay-state.ts';

/** The contributor's step after a missed turn is the one the rules give (back of the queue, out). */
export function checkAfterMiss(entry: StepEntry, { consequence, lapse, optional }: AfterMiss): void {
  const requeued = entry.type === 'join' && entry.via === 'missed' && entry.circuit === lapse.circuit;
  const removed = entry.type === 'removed' && entry.reason === 'missed_turns' && entry.circuit === lapse.circuit;
  if (consequence.kind === 'removed' && !removed && !optional)
    throw broken(entry, `after ${describeEntry(lapse)} the rules take the entry out of the queue`);
  if (consequence.kind !== 'back_of_queue' && entry.type === 'join' && entry.via === 'missed')
    throw broken(entry, `after ${describeEntry(lapse)} the rules do not put the entry at the back of the queue`);
  if (consequence.kind === 'back_of_queue') {
    if (!requeued) throw broken(entry, `after ${describeEntry(lapse)} the rules put the entry back in line`);
    const eligibleAt = entry.eligibleAt === undefined ? ms(entry.time) : ms(entry.eligibleAt);
    if (eligibleAt !== consequence.eligibleAt)
      throw broken(
        entry,
        `eligible at ${entry.eligibleAt ?? entry.time}, not at the end of the cooldown ` +
          `(${new Date(consequence.eligibleAt).toISOString()})`,
      );
  }
}

/** A taken turn ended for silence: the rules have the period, and it ran out after the turn was taken. */
function checkSilence(entry: StepEntry, silentSince: string, turn: Turn, rules: QueueRules, at: number): void {
  const silenceMs = rules.turnSilenceMs ?? 0;
  if (silenceMs === 0) throw broken(entry, 'a turn ended for silence, which the rules in force do not have');
  if (ms(silentSince) < (turn.takenAt ?? Infinity))
    throw broken(entry, `it was last heard from (${silentSince}) before the turn was taken`);
  if (at <= ms(silentSince) + silenceMs)
    throw broken(entry, `a turn ended for silence before ${silenceMs} ms had passed since ${silentSince}`);
}

/**
 * Passed over, or a turn passed on, because the contributor's presence stream closed at
 * `disconnectedAt`: the rules have the grace, and it ran out. When the stream closed is the
 * coordinator's word, as when a client was last heard from.
 */
export function checkDisconnect(entry: StepEntry, disconnectedAt: string, rules: QueueRules, at: number): void {
  const graceMs = rules.disconnectGraceMs ?? 0;
  if (graceMs === 0) throw broken(entry, 'it names a closed presence stream, which the rules in force do not count');
  if (at <= ms(disconnectedAt) + graceMs)
    throw broken(entry, `it came before ${graceMs} ms had passed since the stream closed (${disconnectedAt})`);
}

/** A taken turn's lapse came no sooner than the rule it names (deadline, silence, closed stream, upload) allows. */
export function checkTakenLapse(entry: EntryOf<'lapsed'>, turn: Turn, rules: QueueRules, at: number): void {
  if (entry.disconnectedAt !== undefined) checkDisconnect(entry, entry.disconnectedAt, rules, at);
  else if (entry.silentSince !== undefined) checkSilence(entry, entry.silentSince, turn, rules, at);
  else if (entry.uploadDue !== undefined) {
    if (rules.uploadStartMs === 0)
      throw broken(entry, 'a turn ended for want of an upload, which the rules in force do not have');
    if (ms(entry.uploadDue) !== ms(turn.granted.time) + rules.uploadStartMs)
      throw broken(entry, `its upload was due ${rules.uploadStartMs} ms after the grant, not at ${entry.uploadDue}`);
    if (at <= ms(entry.uploadDue)) throw broken(entry, `it ended before its upload was due (${entry.uploadDue})`);
  } else if (entry.uploadStalledSince !== undefined) {
    const since = entry.uploadStalledSince;
    if (rules.uploadStallMs === 0)
      throw broken(entry, 'a turn ended for a stalled upload, which the rules in force do not have');
    if (ms(since) < (turn.takenAt ?? Infinity))
      throw broken(entry, `its upload's last progress (${since}) came before the turn was taken`);
    if (at <= ms(since) + rules.uploadStallMs)
      throw broken(
        entry,
        `a turn ended for a stalled upload before ${rules.uploadStallMs} ms had passed since ${since}`,
      );
  } else if (at <= ms(turn.granted.deadline)) throw broken(entry, 'a missed turn before its deadline');
}
