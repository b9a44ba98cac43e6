/**
 * The life of a turn and of the contribution uploaded in it, as one state machine: the states, the
 * moves between them as a table, and `transition`, which refuses any other move. The lobby (the
 * turn, its history) and the contribution store (the row and its verdict) both take their states
 * from here, and the lobby's outcome of an ended turn is derived from the final state rather than
 * kept in a vocabulary of its own, so the two cannot drift apart.
 *
 *   turn ──uploaded──▶ verifying ──committed─────▶ accepted
 *     │                    ├──────refused───────▶ refused    (the verifier refused it)
 *     │                    ├──────not_committed─▶ discarded  (verified, but no longer fits the chain)
 *     │                    └──────unverifiable──▶ error      (could not be verified: the author goes again)
 *     ├──deadline_passed─▶ missed
 *     ├──removed─────────▶ discarded               (the coordinator took the turn away)
 *     ├──left────────────▶ discarded               (the contributor gave the turn up: POST /api/me/leave)
 *     └──not_taken───────▶ discarded               (never taken in time: it passes on, not a missed turn)
 *
 * A contribution row exists from `verifying` on (the upload made it); a turn without an upload
 * lives in the lobby only.
 */
import { CoordinatorError, type ErrorCode } from '../../core/errors.ts';

export const LIFECYCLE_STATES = ['turn', 'verifying', 'accepted', 'refused', 'discarded', 'error', 'missed'] as const;
export type LifecycleState = (typeof LIFECYCLE_STATES)[number];

export const LIFECYCLE_EVENTS = [
  'uploaded',
  'deadline_passed',
  'removed',
  'left',
  'not_taken',
  'committed',
  'refused',
  'not_committed',
  'unverifiable',
] as const;
export type LifecycleEvent = (typeof LIFECYCLE_EVENTS)[number];

/** Every legal move; a state with no entry for an event does not take it. The final states take none. */
const TRANSITIONS: Readonly<Record<LifecycleState, Readonly<Partial<Record<LifecycleEvent, LifecycleState>>>>> = {
  turn: {
    uploaded: 'verifying',
    deadline_passed: 'missed',
    removed: 'discarded',
    left: 'discarded',
    not_taken: 'discarded',
  },
  verifying: { committed: 'accepted', refused: 'refused', not_committed: 'discarded', unverifiable: 'error' },
  accepted: {},
  refused: {},
  discarded: {},
  error: {},
  missed: {},
};

/** Where `event` takes a turn or contribution in state `from`; refuses a move the table does not have. */
export function transition(from: LifecycleState, event: LifecycleEvent): LifecycleState {
  const to = TRANSITIONS[from][event];
  if (to === undefined)
    throw new CoordinatorError(
      'lifecycle.illegal_transition',
      `a contribution in state ${from} cannot take the event ${event}`,
    );
  return to;
}

/** The states of a contribution row: from its upload on. */
export type ContributionStatus = Exclude<LifecycleState, 'turn' | 'missed'>;
export const CONTRIBUTION_STATUSES = [
  'verifying',
  'accepted',
  'refused',
  'discarded',
  'error',
] as const satisfies readonly ContributionStatus[];

/** A verdict on a `verifying` contribution, as the coordinator reaches it. */
export type Verdict =
  /** `transcriptHash`: the hash of the link's transcript entry (the queue log's acceptance names it). */
  | { event: 'committed'; chainIndex: number; contributionHash: string; transcriptHash: string }
  | { event: 'refused' | 'not_committed' | 'unverifiable'; code: ErrorCode; message: string };

/** A verdict with the state it leads to: what both stores record, in one transaction. */
export type SettledVerdict =
  | { status: 'accepted'; chainIndex: number; contributionHash: string; transcriptHash: string }
  | { status: 'refused' | 'discarded' | 'error'; code: ErrorCode; message: string };

/** Applies `verdict` to a contribution in state `from` (only `verifying` takes one). */
export function settleVerdict(from: LifecycleState, verdict: Verdict): SettledVerdict {
  const status = transition(from, verdict.event);
  if (verdict.event === 'committed')
    return {
      status: 'accepted',
      chainIndex: verdict.chainIndex,
      contributionHash: verdict.contributionHash,
      transcriptHash: verdict.transcriptHash,
    };
  return {
    status: status as Exclude<SettledVerdict['status'], 'accepted'>,
    code: verdict.code,
    message: verdict.message,
  };
}

/** How a turn ended, as the lobby's history records it (lobby_turn_history.outcome). */
export type TurnOutcome = 'accepted' | 'refused' | 'discarded' | 'missed';

/**
 * The turn outcome of a final state. An `error` ends the turn as `refused`: either way the
 * author goes back in line and sees why; only the contribution row keeps the difference.
 */
export function turnOutcome(state: LifecycleState): TurnOutcome {
  switch (state) {
    case 'accepted':
    case 'refused':
    case 'discarded':
    case 'missed':
      return state;
    case 'error':
      return 'refused';
    default:
      throw new CoordinatorError('lifecycle.illegal_transition', `a turn in state ${state} has not ended`);
  }
}

/** Whether the author sees the verdict in their status (a refusal or an error, not a discard). */
export function isShownRefusal(verdict: SettledVerdict): boolean {
  return verdict.status === 'refused' || verdict.status === 'error';
}
