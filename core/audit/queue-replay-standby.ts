/**
 * The audit replay's checks of a turn taken over on standby (turn-order.ts standbyDepth,
 * offeredBefore): the takeover itself at the grantee's lapse, the `skipped` entries of those
 * offered the turn first, then the taker's grant and take. The entries offered it before the taker
 * are found by walking the line's index in order (waiting-line.ts), at most as many as the
 * `skipped` entries that must follow in the log (or the audit fails there): a crafted
 * takePriorityMs or standbyStepMs cannot make one step walk the queue without the log paying for
 * each entry walked.
 */
import { CoordinatorError } from '../errors.ts';
import { describeEntry, type QueueLogEntry, type QueueRules } from '../queue-log/queue-log-entry.ts';
import { standbyDepth, statedStandby } from '../queue-log/turn-order.ts';
import { broken, ms, type EntryOf, type ReplayState, type Turn } from './queue-replay-state.ts';

/**
 * After a turn taken over on standby, the taker's `granted` and `taken` follow at the lapse's
 * time, with nothing in between but the grantee's own requeue or removal (what its missed turn
 * leads to, checked as after any). Returns whether `entry` is that grant.
 */
export function followStandby(state: ReplayState, entry: QueueLogEntry): boolean {
  const pending = state.standby;
  if (!pending) return false;
  const { lapse, by } = pending;
  const sameMoment = entry.type !== 'rules' && entry.circuit === lapse.circuit && ms(entry.time) === ms(lapse.time);
  const ownConsequence =
    sameMoment &&
    pending.missed.has(entry.contributor) &&
    ((entry.type === 'join' && entry.via === 'missed') ||
      (entry.type === 'removed' && entry.reason === 'missed_turns'));
  if (ownConsequence) return false;
  if (pending.skipped < pending.skipping.length) {
    const who = pending.skipping[pending.skipped]!;
    if (!(sameMoment && entry.type === 'skipped' && entry.contributor === who && entry.takenOverBy === by))
      throw broken(
        entry,
        `after ${describeEntry(lapse)}, taken over on standby by ${by}, ${who}, offered the turn before ${by}, ` +
          `let it pass: its skipped entry comes next, at the same time (${lapse.time})`,
      );
    pending.skipped++;
    pending.missed.add(who);
    return false;
  }
  if (entry.type === 'skipped')
    throw broken(entry, `${entry.contributor} was not offered the turn before ${by}, who took it on standby`);
  const next = pending.granted ? 'taken' : 'granted';
  const expected =
    entry.type === next &&
    entry.contributor === by &&
    entry.circuit === lapse.circuit &&
    ms(entry.time) === ms(lapse.time);
  if (!expected)
    throw broken(
      entry,
      `after ${describeEntry(lapse)}, taken over on standby by ${by}, ${by}'s ${next} of ${lapse.circuit} ` +
        `comes next, at the same time (${lapse.time})`,
    );
  if (pending.granted) state.standby = undefined;
  else pending.granted = true;
  return next === 'granted';
}

/** At the log's end: a turn taken over on standby whose taker's grant or take is missing. */
export function finishStandby(state: ReplayState): void {
  const pending = state.standby;
  if (pending)
    throw broken(
      pending.lapse,
      `taken over on standby by ${pending.by}, whose ${pending.granted ? 'taken' : 'granted'} does not follow ` +
        '(the log ends)',
    );
}

/**
 * A turn not taken, taken over on standby by `by` (turn-order.ts): the rules have standby, the
 * grantee's priority ran out and its time to be taken did not, and `by` waited among the entries
 * the rule offered the turn to by then, by offeredBefore (the lobby's own, answered by the line's
 * index) over the queue as it was. Its grant and take are checked as they follow (followStandby).
 */
export function checkTakeover(
  state: ReplayState,
  entry: EntryOf<'lapsed'>,
  by: string,
  turn: Turn,
  rules: QueueRules,
  at: number,
): void {
  const standby = statedStandby(rules);
  const priorityMs = standby.takePriorityMs;
  if (priorityMs === 0)
    throw broken(entry, `a turn taken over on standby by ${by}, which the rules in force do not have`);
  if (entry.taken || turn.taken)
    throw broken(entry, `a turn taken over on standby by ${by}; only a turn not yet taken can be`);
  const grantedAt = ms(turn.granted.time);
  const due = turn.granted.takeBy ?? turn.granted.deadline;
  if (at > Math.min(ms(due), ms(turn.granted.deadline)))
    throw broken(entry, `taken over on standby by ${by} after its time to be taken ran out (${due})`);
  const depth = standbyDepth(grantedAt, at, standby);
  if (depth < 1)
    throw broken(
      entry,
      `taken over on standby by ${by} ${at - grantedAt} ms after its grant, before the grantee's priority ` +
        `(${priorityMs} ms) ran out`,
    );
  const waiting = state.waitingFor(by, entry.circuit);
  if (!waiting) throw broken(entry, `${by}, who took the turn over on standby, is not waiting for it`);
  const before = state.line(entry.circuit).offeredBefore(waiting, depth, at);
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
  state.standbyFurthest = Math.max(state.standbyFurthest, before.length + 1);
  state.standby = {
    lapse: entry,
    by,
    granted: false,
    skipping: before.map((w) => w.contributor),
    skipped: 0,
    missed: new Set([entry.contributor]),
  };
}

/**
 * A waiting entry offered a turn on standby before the one who took it let it pass (its order
 * and time checked by followStandby): a missed turn, not taken, with the grantee's consequence:
 * passed on in its place the first time, else at the back (its `join` follows) or out.
 */
export function onSkipped(state: ReplayState, entry: EntryOf<'skipped'>, rules: QueueRules, at: number): void {
  if (!state.standby) throw broken(entry, 'a turn let pass with no turn taken over on standby before it');
  const waiting = state.waitingEntry(entry);
  const missed = state.countMiss(entry);
  const consequence = state.expectAfterMiss(entry, 'not_taken', missed, rules, at);
  // Out of the queue: by its requeue's `join` next (so dequeued here), or by its `removed`.
  if (consequence.kind === 'back_in_place') state.line(entry.circuit).change(waiting, { passedOn: true });
  else if (consequence.kind === 'back_of_queue') state.dequeue(waiting);
}
