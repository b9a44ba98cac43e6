/**
 * How often a waiting contributor asks for news, shared by the page and the terminal client. Paced
 * by how soon something can change for them: the coordinator's load goal assumes 10,000 waiters
 * polling about every 10 s (1,000 req/s); at 2.5 s for everyone that would be 4,000 req/s. Only the
 * few near a turn poll fast, so a granted turn starts within a second.
 */
import { HOLD_TURN_WAIT_WITHIN } from '../core/coordinator-api/lobby-status.ts';

const NEXT_IN_LINE = 3;
const NEAR_FRONT = 20;
const CLOSE_POLL_MS = 1000;
const NEAR_POLL_MS = 2500;
const FAR_POLL_MS = 10_000;

/** The pause before the next poll for someone whose best place in a queue is `position` (1 = next). */
export function waitingPollMs(position: number): number {
  if (position <= NEXT_IN_LINE) return CLOSE_POLL_MS;
  return position <= NEAR_FRONT ? NEAR_POLL_MS : FAR_POLL_MS;
}

/** The pause while a turn or a verdict is near (ours, or next in line). */
export const ACTIVE_POLL_MS = CLOSE_POLL_MS;

/**
 * The pause while our own contribution is being checked: the verdict comes a fraction of a second
 * after the last byte, and at most one contributor per circuit is in that state (nine polling at
 * 4 req/s), so it is shown as soon as it is known rather than up to a second later.
 */
export const VERDICT_POLL_MS = 250;

/**
 * How long the coordinator may hold a poll for our verdict (`GET /api/me?verdictWaitMs`): it answers
 * the moment the verdict is recorded, so the wait ends with the verdict, not a poll after it.
 */
export const VERDICT_WAIT_MS = 10_000;

/**
 * Within reach of a turn (HOLD_TURN_WAIT_WITHIN, which says why), a poll is held instead
 * (`GET /api/me?turnWaitMs`): the coordinator answers the moment a turn is granted or offered on
 * standby, or the place in line changes. Polls start no more often than CLOSE_POLL_MS unless an
 * answer moved the place (a coordinator that answers at once is paced as before).
 */

export function holdsPollForTurn(position: number): boolean {
  return position <= HOLD_TURN_WAIT_WITHIN;
}

export const TURN_WAIT_MS = 10_000;

/** The pause between the starts of two polls while polls are held for a turn. */
export const HELD_POLL_EVERY_MS = CLOSE_POLL_MS;
