/**
 * The lobby's rules of order, as pure functions: who may be granted a circuit's turn, and what a
 * lapsed turn leads to. The lobby (server/lobby/lobby.ts) decides with these, and `ceremony audit`
 * replays the published queue log with the same ones (core/audit/check-queue-fairness.ts), so the
 * order promised, the order applied and the order checked cannot drift apart.
 *
 *  - FIFO per circuit: entries are taken in the order they joined the circuit's queue;
 *  - an entry that is away (its contributor not seen for the presence period) keeps its place but
 *    is passed over while away; so is one still cooling down after a missed turn;
 *  - a granted turn not taken in time passes on and its entry goes back to its place, away; only
 *    a turn that was taken and then lapsed is a missed turn: back of the queue after the cooldown,
 *    or out of it after `maxMissedTurns` misses in that circuit.
 */

export interface WaitingEntry {
  /** Passed over while true. */
  away: boolean;
  /** Not eligible before this (ms since the epoch): the cooldown after a missed turn. */
  eligibleAt: number;
}

/** Whether a waiting entry may be granted a turn at `now`. */
function mayBeGranted(entry: WaitingEntry, now: number): boolean {
  return !entry.away && entry.eligibleAt <= now;
}

/**
 * The entry a free circuit's turn goes to at `now`: the first of `queue` (its waiting entries in
 * FIFO order) that may be granted one, or undefined. Reads `queue` only as far as that entry, so
 * the lobby can pass a database cursor.
 */
export function firstInLine<T extends WaitingEntry>(queue: Iterable<T>, now: number): T | undefined {
  for (const entry of queue) if (mayBeGranted(entry, now)) return entry;
  return undefined;
}

export interface LapseRules {
  cooldownMs: number;
  maxMissedTurns: number;
}

export type LapseConsequence =
  /** Never taken: not a missed turn; the entry goes back to its place, away until seen. */
  | { kind: 'back_in_place_away' }
  /** A taken turn missed: back of the queue, eligible at `eligibleAt`. */
  | { kind: 'back_of_queue'; eligibleAt: number }
  /** The `maxMissedTurns`-th miss: the entry leaves the queue. */
  | { kind: 'removed' };

/**
 * What a lapsed turn leads to. `missedTurns` counts this miss too (misses in this circuit since the
 * contributor last joined); it is ignored for a turn never taken.
 */
export function afterLapse(taken: boolean, missedTurns: number, now: number, rules: LapseRules): LapseConsequence {
  if (!taken) return { kind: 'back_in_place_away' };
  if (missedTurns >= rules.maxMissedTurns) return { kind: 'removed' };
  return { kind: 'back_of_queue', eligibleAt: now + rules.cooldownMs };
}

/** Whether an entry last seen at `seenAt` is away at `now` (presence 0: never). */
export function isAway(seenAt: number, now: number, presenceMs: number): boolean {
  return presenceMs > 0 && now - seenAt > presenceMs;
}
