/**
 * Held `GET /api/me` polls: `?verdictWaitMs=N` (held until a contribution's verdict is in) and
 * `?turnWaitMs=N` (held while waiting in a queue, until the contributor's status changes: a grant,
 * a standby offer, a place in line). A held request is a socket and a file descriptor for up to
 * 10 s, so each contributor holds at most MAX_HELD_POLLS_PER_CONTRIBUTOR at once: a client needs
 * one (two across a reload), and a script that opens hundreds gets `me.too_many_held_polls`, its
 * own 429, rather than the sockets.
 */
import type { ContributorStatus } from '../../core/coordinator-api/lobby-status.ts';
import { CoordinatorError } from '../../core/errors.ts';
import { KeyedSlots } from '../http/keyed-slots.ts';

const MAX_HELD_POLLS_PER_CONTRIBUTOR = 2;
/**
 * Held polls at once, all contributors together: each re-reads its status at every tick of the
 * lobby. Honest clients need HOLD_TURN_WAIT_WITHIN (24) per circuit (core/coordinator-api/
 * lobby-status.ts) and a verdict wait per circuit (225 for nine circuits); beyond, a poll is
 * answered at once, as an older coordinator would, and the client paces its polls.
 */
const MAX_HELD_POLLS = 1000;
/** The longest a turn wait is held: a client near the front asks again at once, at no cost. */
export const MAX_TURN_WAIT_MS = 10_000;

/**
 * What a turn wait watches of a status: each circuit's state, place in line, cooldown and standby
 * offer. The estimate (etaMs) moves with the clock and is left out, or every tick would answer.
 */
export function statusKey(status: ContributorStatus): string {
  return JSON.stringify([
    status.circuits.map((c) =>
      c.state === 'waiting' ? [c.circuit, c.state, c.position, c.eligibleAt, c.standbyUntil] : [c.circuit, c.state],
    ),
    status.removed?.at,
    status.lastRefusal?.at,
    status.leaving,
  ]);
}

export class HeldPolls {
  private readonly slots = new KeyedSlots();

  constructor(private readonly maxHeld = MAX_HELD_POLLS) {}

  /**
   * Takes one of the contributor's held-poll slots, or throws me.too_many_held_polls. Returns its
   * release (once only), or undefined when the coordinator holds as many as it takes: answer at once.
   */
  take(contributorId: string): (() => void) | undefined {
    const held = this.slots.heldBy(contributorId);
    if (held >= MAX_HELD_POLLS_PER_CONTRIBUTOR)
      throw new CoordinatorError(
        'me.too_many_held_polls',
        `you already have ${held} requests for news held by the coordinator (at most ` +
          `${MAX_HELD_POLLS_PER_CONTRIBUTOR}); ask again without verdictWaitMs or turnWaitMs, or when one answered`,
      );
    if (this.slots.total >= this.maxHeld) return undefined;
    return this.slots.take(contributorId);
  }
}

/**
 * Resolves when `changed()` answers true (asked each time `watch` calls back), after `ms`, or when
 * `signal` aborts, whichever comes first.
 */
export function untilChanged(
  watch: (onChange: () => void) => () => void,
  changed: () => boolean,
  ms: number,
  signal: AbortSignal,
): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      unwatch();
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const unwatch = watch(() => {
      if (changed()) done();
    });
    if (signal.aborted) return done();
    signal.addEventListener('abort', done, { once: true });
  });
}
