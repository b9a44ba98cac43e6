/**
 * The contributor driver's failure and retry policy (contributor-driver.ts): how a steady run asks
 * again through a busy or restarting coordinator and what ends it, how a turn's failure is
 * counted, and the clock's pauses between tries.
 */
import { terminalWords } from '../core/error-messages.ts';
import { ApiError } from './api-client.ts';
import { RunFailure, type DriverClock, type DriverView, type TurnFailure } from './contributor-driver-parts.ts';
import { looksLikeRestart, RESTART_RIDE_OUT_MS } from './restart-retry.ts';
import { duration } from './run-words.ts';

/** A coordinator busy this long (rate limits, its own errors) ends a steady run (a turn would be missed anyway). */
const BUSY_FOR_MS = 10 * 60_000;
/** Refusals that say the turn is no longer this contributor's (or its upload is in already). */
export const LOST_TURN_CODES = new Set(['lobby.not_your_turn', 'lobby.already_contributed']);

/** Resolves after `ms` on the clock, or at once when `signal` aborts. */
export function sleep(clock: DriverClock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    let cancel = (): void => {};
    const done = (): void => {
      cancel();
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    cancel = clock.after(ms, done);
  });
}

/** How a turn that ended on `error` without an upload is counted (TurnFailure.kind). */
export function failureKind(error: ApiError): TurnFailure['kind'] {
  if (LOST_TURN_CODES.has(error.code)) return 'lost';
  if (error.code === 'network' || error.status >= 500) return 'interrupted';
  return 'refused';
}

/**
 * The calls a steady run cannot do without: a busy coordinator (rate limits, a 5xx of its own) is
 * asked again with growing pauses (said once), an ended session is signed in again. A coordinator
 * that does not answer has been asked again by the client for RESTART_RIDE_OUT_MS already: that
 * ends the run. Anything else is thrown.
 */
export class SteadyRequests {
  private busySince: number | undefined;

  constructor(
    private readonly clock: DriverClock,
    private readonly view: DriverView,
    private readonly stopping: AbortSignal,
    private readonly steady: { signInAgain(): Promise<void> } | undefined,
  ) {}

  async ask<T>(request: () => Promise<T>): Promise<T> {
    let wait = 1000;
    for (;;) {
      try {
        const answer = await request();
        if (this.busySince !== undefined) this.view.note?.('the coordinator answers again');
        this.busySince = undefined;
        return answer;
      } catch (error) {
        if (this.stopping.aborted || !(error instanceof ApiError)) throw error;
        if (error.code === 'auth.required') {
          this.view.note?.('the session ended; signing in again');
          await this.steady!.signInAgain();
          continue;
        }
        throwIfFatal(error);
        const now = this.clock.now();
        if (this.busySince === undefined) {
          this.busySince = now;
          this.view.note?.(`the coordinator is busy (${error.message}); asking again`);
        } else if (now - this.busySince > BUSY_FOR_MS) {
          throw new RunFailure(
            'network',
            `the coordinator was busy for ${duration(now - this.busySince)}: ${error.message}`,
          );
        }
        await sleep(this.clock, Math.max(wait, (error.retryAfterSeconds ?? 0) * 1000), this.stopping);
        wait = Math.min(wait * 2, 30_000);
      }
    }
  }
}

/** Throws what a steady run cannot get past: the ceremony over, the coordinator gone, a refusal not for load. */
function throwIfFatal(error: ApiError): void {
  if (error.code === 'ceremony.not_open' || error.code === 'ceremony.finalised')
    throw new RunFailure(error.code, `${terminalWords(error.code).what} (${error.message})`);
  if (looksLikeRestart(error.status, error.code))
    throw new RunFailure(
      'network',
      `the coordinator did not answer for ${duration(RESTART_RIDE_OUT_MS)}: ${error.message}`,
    );
  const transient =
    error.code === 'rate.limited' ||
    error.code === 'rate.ceremony_reads' ||
    error.code === 'lobby.too_many_joins' ||
    error.status >= 500;
  if (!transient) throw error;
}
