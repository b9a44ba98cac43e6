/**
 * The lobby's rules of order, as pure functions: who may be granted a circuit's turn, what a turn
 * that ends without a contribution leads to, and when an entry joining a queue may be granted. The
 * lobby (server/lobby/lobby.ts) decides with these, and `ceremony audit` replays the published
 * queue log with the same ones (core/audit/check-queue-fairness.ts), so the order promised, the
 * order applied and the order checked cannot drift apart.
 *
 *  - FIFO per circuit: entries are taken in the order they joined the circuit's queue;
 *  - an entry that is away (its contributor not seen for the presence period) keeps its place but
 *    is passed over while away; so is one still cooling down after a missed turn;
 *  - every turn that ends without a contribution is a missed turn of its holder in that circuit:
 *    not taken in time, taken and lapsed (deadline, silence, gone, no upload progress), left, or
 *    refused (a refusal, or an error the upload caused). The count is kept across leaving and
 *    joining again; it is never reset;
 *  - the first missed turn in a circuit, if it was never taken, keeps the entry's place (a
 *    contributor who stepped away while waiting does not lose it), but the entry is passed on: it
 *    is not eligible before the circuit's next turn has ended, unless nobody else may be granted.
 *    Any other missed turn sends the entry to the back of the queue (after the cooldown; a refusal
 *    at once), and the `maxMissedTurns`-th takes it out of the queue;
 *  - joining a circuit's queue in which the contributor already missed `maxMissedTurns` turns is
 *    allowed (a missed turn is not a ban), but the entry is eligible only after the cooldown,
 *    doubled for each miss beyond the limit: an account that never takes its turn costs the
 *    circuit fewer and fewer turns, however often it joins again;
 *  - standby (standbyDepth): a granted turn not taken is its grantee's alone for takePriorityMs,
 *    then offered to the entries behind it too, one more every standbyStepMs. The step is shorter
 *    than the priority so that each entry ahead of a ready one costs the circuit a step, not a
 *    whole priority: the grantee keeps its priority, an entry the offer reached has a step to take
 *    it (a client holding its poll needs a round trip) before the next entry may too.
 */

export interface WaitingEntry {
  /** Passed over while true. */
  away: boolean;
  /** Not eligible before this (ms since the epoch): the cooldown after a missed turn. */
  eligibleAt: number;
  /** Back in its place after a turn it did not take: waits for the circuit's next turn to end (see the header). */
  passedOn: boolean;
}

/** Whether a waiting entry may be granted a turn at `now` (its place and `passedOn` aside). */
function mayBeGranted(entry: WaitingEntry, now: number): boolean {
  return !entry.away && entry.eligibleAt <= now;
}

/**
 * The entry a free circuit's turn goes to at `now`: the first of `queue` (its waiting entries in
 * FIFO order) that may be granted one and is not passed on; failing that, the first passed-on one
 * that may (nobody else could take the turn). Reads `queue` only as far as that entry when it is
 * not passed on, so the lobby can pass a database cursor.
 */
export function firstInLine<T extends WaitingEntry>(queue: Iterable<T>, now: number): T | undefined {
  let passedOn: T | undefined;
  for (const entry of queue) {
    if (!mayBeGranted(entry, now)) continue;
    if (!entry.passedOn) return entry;
    passedOn ??= entry;
  }
  return passedOn;
}

/**
 * Standby (`takePriorityMs` > 0): a granted turn not yet taken is its grantee's alone for
 * takePriorityMs; from then on the entry next in line may take it too, and one more entry every
 * further standbyStepMs, until it is taken or its time to be taken (takeTurnMs) runs out. The
 * first of them to take it holds it; the grant ends as the grantee's missed turn, not taken, and so
 * does the offer to every entry offered it before the one that took it (offeredBefore). So a turn
 * nobody ahead wants costs the circuit takePriorityMs, then standbyStepMs for each entry ahead of
 * the first ready one, not takeTurnMs, while somebody behind is ready, and entries that let it pass
 * pay as the grantee does: a run of accounts that never take costs the circuit about that once or
 * twice, not on every turn. With nobody ready, the grantee keeps the whole takeTurnMs.
 *
 * Why the step is shorter than the priority (issue 62): the grantee keeps its full priority, but an
 * entry the offer reached has one step, not a whole priority, to take it before the offer also
 * reaches the entry behind it. An honest client holding its poll hears of the offer within a round
 * trip, well inside a step (1.25 s by default); one slower than that can be overtaken and pays a
 * missed turn (the first one keeps its place). That is the trade: a run of accounts that never take
 * costs a step each instead of a priority each. A step equal to the priority is the rule before the
 * step, which a log whose rules state no step was written under (statedStandby).
 */
export interface StandbyRule {
  /** How long a granted turn is its grantee's alone; 0: standby off. */
  takePriorityMs: number;
  /** After the priority, the offer reaches one more entry every this long (> 0, ≤ takePriorityMs). */
  standbyStepMs: number;
}

/**
 * The standby rule a queue log's rules entry states: no step stated (a log written before the step
 * existed) means one entry more every takePriorityMs, as that log's lobby applied.
 */
export function statedStandby(rules: { takePriorityMs?: number; standbyStepMs?: number }): StandbyRule {
  const takePriorityMs = rules.takePriorityMs ?? 0;
  return { takePriorityMs, standbyStepMs: rules.standbyStepMs ?? takePriorityMs };
}

/**
 * How many entries behind the grantee may take a turn granted at `grantedAt`, at `now` (0: standby
 * off, or the grantee's priority not yet run out): 1 from grantedAt + takePriorityMs, one more at
 * every standbyStepMs after that.
 */
export function standbyDepth(grantedAt: number, now: number, rule: StandbyRule): number {
  const { takePriorityMs, standbyStepMs } = rule;
  if (!(takePriorityMs > 0) || !(now >= grantedAt + takePriorityMs)) return 0;
  // A step that is no period (the lobby and the audit refuse one) widens the offer no further.
  if (!(standbyStepMs > 0)) return 1;
  return 1 + Math.floor((now - grantedAt - takePriorityMs) / standbyStepMs);
}

/**
 * When the offer of a turn granted at `grantedAt` reaches `depth` entries (standbyDepth's inverse):
 * the lobby ticks then, so a held poll hears of it. Infinity with standby off.
 */
export function standbyReachedAt(grantedAt: number, depth: number, rule: StandbyRule): number {
  const { takePriorityMs, standbyStepMs } = rule;
  if (!(takePriorityMs > 0)) return Infinity;
  if (depth <= 1) return grantedAt + takePriorityMs;
  return standbyStepMs > 0 ? grantedAt + takePriorityMs + (depth - 1) * standbyStepMs : Infinity;
}

/**
 * Whether the entry `isCandidate` picks may take a circuit's turn on standby at `now`, `depth`
 * entries being offered it (standbyDepth): it may be granted one (not away, cooled down), and it is
 * among the first `depth` entries firstInLine would grant turns to one after the other, the ones
 * not passed on in FIFO order, then the passed-on ones. `queue` is the circuit's waiting entries in
 * FIFO order, the turn's grantee not among them; it is read only as far as the answer needs.
 *
 * When it may, the answer is the entries offered the turn before it, in that order (fewer than
 * `depth`): each of them let the turn pass to an entry behind it, and that is their missed turn,
 * not taken, as the grantee's is. Undefined when it may not.
 */
export function offeredBefore<T extends WaitingEntry>(
  queue: Iterable<T>,
  isCandidate: (entry: T) => boolean,
  depth: number,
  now: number,
): T[] | undefined {
  if (depth <= 0) return undefined;
  const ahead: T[] = [];
  const passedOnAhead: T[] = [];
  let passedOnCandidate = false;
  for (const entry of queue) {
    const candidate = isCandidate(entry);
    const eligible = mayBeGranted(entry, now);
    if (candidate && !eligible) return undefined;
    if (candidate && !entry.passedOn) return ahead.length < depth ? ahead : undefined;
    if (candidate) passedOnCandidate = true;
    else if (eligible && !entry.passedOn) ahead.push(entry);
    else if (eligible && !passedOnCandidate) passedOnAhead.push(entry);
    if (ahead.length + (passedOnCandidate ? passedOnAhead.length : 0) >= depth) return undefined;
  }
  return passedOnCandidate && ahead.length + passedOnAhead.length < depth ? [...ahead, ...passedOnAhead] : undefined;
}

/** Whether the entry `isCandidate` picks may take the turn on standby (offeredBefore answers). */
export function mayTakeOnStandby<T extends WaitingEntry>(
  queue: Iterable<T>,
  isCandidate: (entry: T) => boolean,
  depth: number,
  now: number,
): boolean {
  return offeredBefore(queue, isCandidate, depth, now) !== undefined;
}

export interface LapseRules {
  cooldownMs: number;
  maxMissedTurns: number;
}

/** How a turn ended without a contribution. */
export type MissedTurnKind =
  /** Granted, never taken in time (or its holder gone before taking it). */
  | 'not_taken'
  /** Taken, then lapsed: its deadline, its client's silence, its holder gone, no upload progress. */
  | 'lapsed'
  /** Its upload was refused, or could not be verified because of what was uploaded. */
  | 'refused'
  /** Its holder left it (POST /api/me/leave). */
  | 'left';

export type LapseConsequence =
  /** The first miss in the circuit, never taken: back in its place, away until seen, passed on. */
  | { kind: 'back_in_place' }
  /** Back of the queue, eligible at `eligibleAt`. */
  | { kind: 'back_of_queue'; eligibleAt: number }
  /** The `maxMissedTurns`-th miss: the entry leaves the queue. */
  | { kind: 'removed' }
  /** Left: queued nowhere (the count is kept for when they join again). */
  | { kind: 'out' };

/**
 * What a turn that ended without a contribution leads to. `missedTurns` counts this miss too (every
 * miss of the contributor in this circuit, never reset).
 */
export function afterMissedTurn(
  kind: MissedTurnKind,
  missedTurns: number,
  now: number,
  rules: LapseRules,
): LapseConsequence {
  if (kind === 'left') return { kind: 'out' };
  if (missedTurns >= rules.maxMissedTurns) return { kind: 'removed' };
  if (kind === 'not_taken' && missedTurns === 1) return { kind: 'back_in_place' };
  if (kind === 'refused') return { kind: 'back_of_queue', eligibleAt: now };
  return { kind: 'back_of_queue', eligibleAt: now + rules.cooldownMs };
}

/** The cooldown of a join beyond the missed-turn limit doubles at most this many times (64 × the cooldown). */
const MAX_DOUBLINGS = 6;

/**
 * When an entry that joins a circuit's queue (a join, a new choice of circuits, after an accepted or
 * refused contribution in the circuit before or this one) may first be granted: at once, unless the
 * contributor already missed `maxMissedTurns` turns in that circuit; then after the cooldown,
 * doubled for each miss beyond the limit. A requeue after a missed turn takes afterMissedTurn's.
 */
export function eligibleOnJoin(missedTurns: number, now: number, rules: LapseRules): number {
  if (missedTurns < rules.maxMissedTurns) return now;
  return now + rules.cooldownMs * 2 ** Math.min(missedTurns - rules.maxMissedTurns, MAX_DOUBLINGS);
}

/** Whether an entry last seen at `seenAt` is away at `now` (presence 0: never). */
export function isAway(seenAt: number, now: number, presenceMs: number): boolean {
  return presenceMs > 0 && now - seenAt > presenceMs;
}
