/**
 * The lobby's own rules, as pure functions of plain inputs: no database, no clock, no memory. The
 * rules of order the audit replays too (who is first in line, what a missed turn leads to, when a
 * join is eligible) are core/queue-log/turn-order.ts's; these are the rest, the ones that decide
 * when a turn ends and who counts as there:
 *
 * - presence: an entry whose contributor has not been seen (a poll, a join) for `presenceMs` is
 *   away: it keeps its place but is passed over. A client that holds the presence stream and
 *   closes it (a closed tab, a killed terminal) is gone `disconnectGraceMs` later unless seen or
 *   heard again: its entry is away, a turn granted to it and not taken passes on, and a taken turn
 *   is missed, without waiting for `presenceMs`, `takeTurnMs` or `turnSilenceMs`;
 * - a granted turn not taken (a download of its head or inputs, an upload; not a heartbeat) within
 *   `takeTurnMs` passes on, a missed turn; without a time to be taken (0) a turn counts as taken
 *   when granted;
 * - a taken turn whose client falls silent (nothing from it for `turnSilenceMs`), none of whose
 *   upload arrived within `uploadStartMs` of its grant, or whose upload stalls for `uploadStallMs`,
 *   is missed then, not at its deadline: heartbeats alone do not hold a turn;
 * - a heartbeat extends a taken turn's deadline to `heartbeatExtensionMs` from now, never past
 *   `maxTurnMs` from its grant;
 * - a refusal, and an error the upload caused, is a missed turn; a discarded upload, or an error
 *   of the coordinator's own, is not.
 *
 * Every time is in ms since the epoch; a turn's rule is strictly past at the millisecond after.
 */
import type { MissedTurnKind } from '../../core/queue-log/turn-order.ts';
import { isAway } from '../../core/queue-log/turn-order.ts';
import type { LifecycleEvent, SettledVerdict } from '../contributions/contribution-lifecycle.ts';

/**
 * Standby offers are read in only this many rows of a queue: an offer reaches one more entry each
 * standbyStepMs after takePriorityMs (20 with the defaults), so only a front full of away or
 * cooling entries could put one further back, and each status and each head download would then
 * read that far. An entry beyond is not offered the turn (the audit checks the takeovers made, not
 * the ones refused).
 */
export const STANDBY_SCAN_ROWS = 256;

/** An upload progresses when it gains this much (or the rest of it): a trickle of bytes does not hold a turn. */
export const UPLOAD_PROGRESS_BYTES = 64 * 1024;
/** Clients are asked to beat every quarter of the silence period, within these bounds. */
const HEARTBEAT_EVERY_MAX_MS = 30_000;
const HEARTBEAT_EVERY_MIN_MS = 500;

/** The settings these rules read (ms; 0 turns a rule off where its setting says so). */
export interface LobbyRules {
  presenceMs: number;
  takeTurnMs: number;
  takePriorityMs: number;
  turnTimeoutMs: number;
  turnSilenceMs: number;
  disconnectGraceMs: number;
  uploadStartMs: number;
  uploadStallMs: number;
  heartbeatExtensionMs: number;
  maxTurnMs: number;
}

/** A granted turn's times. */
export interface TurnTimes {
  startedAt: number;
  deadline: number;
  /** When it was taken; null while granted and not taken yet. */
  takenAt: number | null;
}

/** A taken turn's upload at its last progress: which upload, its offset then, and when. */
export interface UploadProgress {
  uploadId: string;
  offset: number;
  at: number;
}

/** Why a taken turn ended before its deadline (see LobbyEvent turn_missed). */
export interface LapseCause {
  silentSince?: number;
  disconnectedAt?: number;
  uploadDue?: number;
  uploadStalledSince?: number;
}

/** When a contributor whose presence stream closed at `closedAt` is gone: its grace run out by `now`. */
export function goneSince(closedAt: number | undefined, now: number, rules: LobbyRules): number | undefined {
  return closedAt !== undefined && now - closedAt > rules.disconnectGraceMs ? closedAt : undefined;
}

/**
 * Whether a waiting entry is passed over at `now`: unseen for presenceMs, or gone since its stream
 * closed. An entry never seen (since a restart) counts as seen now.
 */
export function isPassedOver(
  seenAt: number | undefined,
  closedAt: number | undefined,
  now: number,
  rules: LobbyRules,
): boolean {
  return isAway(seenAt ?? now, now, rules.presenceMs) || goneSince(closedAt, now, rules) !== undefined;
}

/**
 * Why an entry passed over is away, as its queue log step says: when it was last seen, and the
 * stream's close only when that is what made it away (presence alone would not have).
 */
export function awayCause(
  seenAt: number | undefined,
  closedAt: number | undefined,
  now: number,
  rules: LobbyRules,
): { seenAt: number; disconnectedAt?: number } {
  const seen = seenAt ?? now;
  const closed = isAway(seen, now, rules.presenceMs) ? undefined : goneSince(closedAt, now, rules);
  return closed === undefined ? { seenAt: seen } : { seenAt: seen, disconnectedAt: closed };
}

/** A turn granted at `now`: its deadline, when it counts as taken (null: not yet), and its time to be taken. */
export function grantedTurn(
  now: number,
  rules: LobbyRules,
): { deadline: number; takenAt: number | null; takeBy?: number } {
  const deadline = now + Math.min(rules.turnTimeoutMs, rules.maxTurnMs);
  return rules.takeTurnMs > 0
    ? { deadline, takenAt: null, takeBy: now + rules.takeTurnMs }
    : { deadline, takenAt: now };
}

/** When a granted turn must be taken by. */
export function takeBy(turn: Pick<TurnTimes, 'startedAt'>, rules: LobbyRules): number {
  return turn.startedAt + rules.takeTurnMs;
}

/** The time to be taken a contributor is shown: the deadline when that comes first. */
export function shownTakeBy(turn: TurnTimes, rules: LobbyRules): number {
  return Math.min(takeBy(turn, rules), turn.deadline);
}

/** Whether a turn may still be taken at `now`: taken already, or within its time to be taken. */
export function mayTake(turn: TurnTimes, now: number, rules: LobbyRules): boolean {
  return turn.takenAt !== null || now <= takeBy(turn, rules);
}

/** Why a granted turn is no longer live at `now`: its deadline passed, or it was not taken by its time. */
export function turnOver(turn: TurnTimes, now: number, rules: LobbyRules): 'expired' | 'not_taken' | undefined {
  if (turn.deadline < now) return 'expired';
  if (!mayTake(turn, now, rules)) return 'not_taken';
  return undefined;
}

/** The deadline after a heartbeat at `now`: extended to heartbeatExtensionMs from now, never past maxTurnMs. */
export function heartbeatDeadline(turn: TurnTimes, now: number, rules: LobbyRules): number {
  return Math.min(Math.max(turn.deadline, now + rules.heartbeatExtensionMs), turn.startedAt + rules.maxTurnMs);
}

/** How often a turn's client should send a heartbeat: several times within the silence period. */
export function heartbeatEveryMs(rules: LobbyRules): number {
  const { turnSilenceMs, heartbeatExtensionMs } = rules;
  const within = turnSilenceMs > 0 ? Math.min(turnSilenceMs, heartbeatExtensionMs) : heartbeatExtensionMs;
  return Math.min(HEARTBEAT_EVERY_MAX_MS, Math.max(HEARTBEAT_EVERY_MIN_MS, Math.floor(within / 4)));
}

/** When a taken turn's client was last heard from: `heardAt` if known, else when it took the turn. */
export function lastHeard(heardAt: number | undefined, turn: TurnTimes): number {
  return heardAt ?? turn.takenAt ?? turn.startedAt;
}

/**
 * The bytes an upload of `size` must gain per uploadStallMs to count as progress: 64 KiB, or the
 * pace that sends the whole upload within maxTurnMs if that is more. A trickle of 64 KiB a period
 * (550 B/s) would otherwise hold a turn to maxTurnMs; at this pace the turn's time is the
 * upload's own (39 kB/s for a 141 MB key, a 60-min turn and a 2-min period: any home link).
 */
export function progressStep(size: number | undefined, rules: LobbyRules): number {
  const { uploadStallMs, maxTurnMs } = rules;
  if (size === undefined || uploadStallMs <= 0) return UPLOAD_PROGRESS_BYTES;
  return Math.max(UPLOAD_PROGRESS_BYTES, Math.ceil((size * uploadStallMs) / maxTurnMs));
}

/**
 * Whether an upload now at `upload.offset` progressed since `last`: it gained progressStep (or
 * reached its end) since the last progress of the same upload; a new upload starts from 0.
 */
export function isProgress(
  last: UploadProgress | undefined,
  upload: { id: string; offset: number; size?: number },
  rules: LobbyRules,
): boolean {
  const from = last?.uploadId === upload.id ? last.offset : 0;
  const rest = upload.size === undefined ? Infinity : upload.size - from;
  return upload.offset - from >= Math.max(1, Math.min(progressStep(upload.size, rules), rest));
}

/**
 * When a taken turn lapses for want of upload progress: its grant + uploadStartMs while none of
 * its upload has arrived, its last progress + uploadStallMs after; undefined when the rule is off.
 */
export function uploadDueAt(
  turn: Pick<TurnTimes, 'startedAt'>,
  progress: UploadProgress | undefined,
  rules: LobbyRules,
): number | undefined {
  if (progress === undefined) return rules.uploadStartMs > 0 ? turn.startedAt + rules.uploadStartMs : undefined;
  return rules.uploadStallMs > 0 ? progress.at + rules.uploadStallMs : undefined;
}

/**
 * Why a taken turn, its deadline not passed, ends at `now`: its client silent since `heard`, or no
 * upload progress (none started, or stalled); undefined while it lives.
 */
export function lapseOfTakenTurn(
  turn: TurnTimes,
  heard: number,
  progress: UploadProgress | undefined,
  now: number,
  rules: LobbyRules,
): LapseCause | undefined {
  if (rules.turnSilenceMs > 0 && now - heard > rules.turnSilenceMs) return { silentSince: heard };
  const due = uploadDueAt(turn, progress, rules);
  if (due === undefined || now <= due) return undefined;
  return progress === undefined ? { uploadDue: due } : { uploadStalledSince: progress.at };
}

/**
 * The first moment a granted turn may end because time passed (Infinity: none): its deadline, its
 * time to be taken, its client's silence, its upload's time to start or stall, or its holder's
 * closed stream's grace; each the millisecond after, when it is strictly past.
 */
export function turnDueAt(
  turn: TurnTimes,
  seen: { heard: number; progress: UploadProgress | undefined; closedAt: number | undefined },
  rules: LobbyRules,
): number {
  let due = turn.deadline + 1;
  if (turn.takenAt === null && rules.takeTurnMs > 0) due = Math.min(due, takeBy(turn, rules) + 1);
  if (turn.takenAt !== null && rules.turnSilenceMs > 0) due = Math.min(due, seen.heard + rules.turnSilenceMs + 1);
  const noProgress = turn.takenAt === null ? undefined : uploadDueAt(turn, seen.progress, rules);
  if (noProgress !== undefined) due = Math.min(due, noProgress + 1);
  if (seen.closedAt !== undefined) due = Math.min(due, seen.closedAt + rules.disconnectGraceMs + 1);
  return due;
}

/** The life-cycle event each settled verdict is, for the transition of the turn it ends. */
const VERDICT_EVENTS: Record<SettledVerdict['status'], LifecycleEvent> = {
  accepted: 'committed',
  refused: 'refused',
  discarded: 'not_committed',
  error: 'unverifiable',
};

export function verdictEvent(status: SettledVerdict['status']): LifecycleEvent {
  return VERDICT_EVENTS[status];
}

/**
 * Whether a verdict is a missed turn: a refusal, or an error the upload caused (the verifier failed
 * on what was uploaded, not the coordinator on its own files).
 */
export function verdictMiss(
  status: SettledVerdict['status'],
  errorCausedByUpload: boolean,
): Extract<MissedTurnKind, 'refused'> | undefined {
  return status === 'refused' || (status === 'error' && errorCausedByUpload) ? 'refused' : undefined;
}

/** Whether a contributor's choice of circuits (undefined: every circuit) keeps `circuit`. */
export function keepsCircuit(chosen: readonly string[] | undefined, circuit: string): boolean {
  return chosen === undefined || chosen.includes(circuit);
}

/** The circuit a contributor queues for next: the first, in ceremony order, chosen and not accepted yet. */
export function nextCircuit(
  circuits: readonly string[],
  accepted: ReadonlySet<string>,
  chosen: readonly string[] | undefined,
): string | undefined {
  return circuits.find((circuit) => !accepted.has(circuit) && keepsCircuit(chosen, circuit));
}
