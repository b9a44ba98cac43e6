/**
 * How the contributor driver (contributor-driver.ts) waits in line: the pause before each
 * `GET /api/me`, and which polls the coordinator is asked to hold (for a turn, a standby offer or a
 * verdict), given up or asked again unheld when it refuses.
 */
import type { MeView } from '../core/coordinator-api/api-types.ts';
import { ApiError } from './api-client.ts';
import { isJoined, type DriverClock, type DriverOptions, type HeldPoll } from './contributor-driver-parts.ts';
import {
  ACTIVE_POLL_MS,
  HELD_POLL_EVERY_MS,
  holdsPollForTurn,
  TURN_WAIT_MS,
  VERDICT_POLL_MS,
  VERDICT_WAIT_MS,
  waitingPollMs,
} from './queue-poll-pace.ts';

/** Poll pace when in no queue (done, or not joined yet); in a queue, queue-poll-pace.ts. */
const NOT_WAITING_POLL_MS = 5000;
/** A held poll refused because this contributor already has two held (another tab, another run). */
const TOO_MANY_HELD_POLLS = 'me.too_many_held_polls';
/** After that refusal, polls are timed, not held, for this long (the other holder may have gone by then). */
const HELD_POLLS_REFUSED_FOR_MS = 60_000;

/** What a held poll waits on in a view: each circuit's state, place, cooldown and standby offer. */
function lineKey(me: MeView): string {
  return JSON.stringify(
    me.status.circuits.map((c) =>
      c.state === 'waiting' ? [c.state, c.position, c.eligibleAt, c.standbyUntil] : [c.state],
    ),
  );
}

/** The best waiting position across circuits (Infinity: waiting nowhere). */
function front(circuits: MeView['status']['circuits']): number {
  return Math.min(Infinity, ...circuits.flatMap((c) => (c.state === 'waiting' ? [c.position] : [])));
}

/** What the pace of the next poll depends on besides the last answer: the turns this side works on. */
export interface TurnsAtHand {
  /** How many turns' work is under way. */
  readonly size: number;
  /** When a failed turn on `circuit` may be taken again (the clock's time), if it failed. */
  retryAt(circuit: string): number | undefined;
}

/** The pace of the driver's polls and the held ones among them. */
export class PollPace {
  /** When the last poll started, to pace held polls; the held poll under way, given up by giveUpHeld. */
  private lastPollAt = -Infinity;
  /** Whether the last answer changed a circuit's state, place, cooldown or standby offer (lineKey). */
  private lastAnswerChanged = false;
  private heldPoll: AbortController | undefined;
  /** An older coordinator that refuses turnWaitMs (400): timed polls for the rest of the run. */
  private turnWaitRefused = false;
  private heldPollsRefusedUntil = -Infinity;

  constructor(
    private readonly clock: DriverClock,
    private readonly options: Pick<DriverOptions, 'pollDuringTurns' | 'holdPollsForVerdicts'>,
  ) {}

  /** A poll starts: held polls are paced from here. */
  started(): void {
    this.lastPollAt = this.clock.now();
  }

  /** An answer came after `before` (null: the first). */
  answered(before: MeView | null, me: MeView): void {
    this.lastAnswerChanged = before !== null && lineKey(me) !== lineKey(before);
  }

  /** Gives up the held poll under way, if any (it would answer up to TURN_WAIT_MS later). */
  giveUpHeld(): void {
    this.heldPoll?.abort();
  }

  /**
   * The pause before the next poll after `me` (queue-poll-pace.ts): by the best waiting position
   * across circuits; `current` is the last answer the driver acted on.
   */
  pace(me: MeView | null, current: MeView | null, turns: TurnsAtHand): number {
    if (!me || me.status.done || !isJoined(me)) return NOT_WAITING_POLL_MS;
    const circuits = me.status.circuits;
    if (circuits.some((c) => c.state === 'verifying')) return VERDICT_POLL_MS;
    const turn = circuits.find((c) => c.state === 'turn');
    if (turn) {
      const retryAt = turns.retryAt(turn.circuit);
      // The terminal does not poll while its turn is paused after a failure: it takes it again after the pause.
      if (!this.options.pollDuringTurns && retryAt !== undefined)
        return Math.max(ACTIVE_POLL_MS, retryAt - this.clock.now());
      return ACTIVE_POLL_MS;
    }
    // A held poll answers when something changes: the next starts at once after a change (a standby
    // offer comes a priority after the place moved), else not more often than before (a coordinator
    // that does not hold polls answers at once with nothing new).
    if (this.turnWaitMs(current, turns.size) !== undefined)
      return this.lastAnswerChanged ? 0 : Math.max(0, this.lastPollAt + HELD_POLL_EVERY_MS - this.clock.now());
    return waitingPollMs(front(circuits));
  }

  /** How the next poll after `me` may be held: for a verdict, for a turn, or (undefined) not at all. */
  holdFor(me: MeView | null, turnsUnderWay: number): HeldPoll | undefined {
    const verdictWaitMs = this.verdictWaitMs(me);
    if (verdictWaitMs !== undefined) return { verdictWaitMs };
    const turnWaitMs = this.turnWaitMs(me, turnsUnderWay);
    return turnWaitMs !== undefined ? { turnWaitMs } : undefined;
  }

  /**
   * How long the next poll may be held for a turn (`GET /api/me?turnWaitMs`): within reach of one,
   * with no turn or verification under way (their polls are paced on their own), unless the
   * coordinator refused held polls; undefined: answered at once.
   */
  private turnWaitMs(me: MeView | null, turnsUnderWay: number): number | undefined {
    if (!me || me.status.done || !isJoined(me) || turnsUnderWay > 0 || this.turnWaitRefused) return undefined;
    if (this.clock.now() < this.heldPollsRefusedUntil) return undefined;
    const circuits = me.status.circuits;
    if (circuits.some((c) => c.state === 'turn' || c.state === 'verifying')) return undefined;
    return holdsPollForTurn(front(circuits)) ? TURN_WAIT_MS : undefined;
  }

  /** How long the next poll may be held for a verdict (holdPollsForVerdicts); undefined: answered at once. */
  private verdictWaitMs(me: MeView | null): number | undefined {
    if (!this.options.holdPollsForVerdicts || !me) return undefined;
    const circuits = me.status.circuits;
    const verifying = circuits.some((c) => c.state === 'verifying');
    const inLine = circuits.some((c) => c.state === 'waiting' || c.state === 'turn');
    return verifying && !inLine ? VERDICT_WAIT_MS : undefined;
  }

  /**
   * One `GET /api/me` through `ask`, held as `hold` says. A held poll the coordinator refuses (too
   * many held: another tab or run holds some; 400: an older coordinator without turnWaitMs) is
   * asked again at once, unheld, and polls are timed as before: for a while, or (400) for the rest
   * of the run. A poll held for a turn and given up (giveUpHeld) is asked again unheld, after
   * `givenUp` is told.
   */
  async ask(
    ask: (held?: HeldPoll) => Promise<MeView>,
    hold: HeldPoll | undefined,
    stopping: AbortSignal,
    givenUp: () => void,
  ): Promise<MeView> {
    if (!hold?.turnWaitMs) {
      if (!hold) return ask();
      try {
        return await ask(hold);
      } catch (error) {
        if (!(error instanceof ApiError && error.code === TOO_MANY_HELD_POLLS)) throw error;
        this.heldPollsRefusedUntil = this.clock.now() + HELD_POLLS_REFUSED_FOR_MS;
        return ask();
      }
    }
    const given = new AbortController();
    this.heldPoll = given;
    try {
      return await ask({ ...hold, signal: AbortSignal.any([given.signal, stopping]) });
    } catch (error) {
      if (stopping.aborted) throw stopping.reason;
      if (given.signal.aborted) {
        givenUp();
        return ask();
      }
      if (!(error instanceof ApiError)) throw error;
      if (error.code === TOO_MANY_HELD_POLLS) this.heldPollsRefusedUntil = this.clock.now() + HELD_POLLS_REFUSED_FOR_MS;
      else if (error.status === 400) this.turnWaitRefused = true;
      else throw error;
      return ask();
    } finally {
      if (this.heldPoll === given) this.heldPoll = undefined;
    }
  }
}
