/**
 * The contributor driver's heartbeats (contributor-driver.ts): one loop per circuit while its turn
 * is held, at the coordinator's pace, and the turn's work stopped when a heartbeat says the turn is
 * gone.
 */
import type { CircuitProgress } from '../core/coordinator-api/api-types.ts';
import { ApiError } from './api-client.ts';
import type { DriverApi, DriverClock, DriverOptions, DriverView } from './contributor-driver-parts.ts';
import { LOST_TURN_CODES, sleep } from './driver-retry.ts';

/** The heartbeat pace until the coordinator's first answer sets its own (it ends silent turns). */
const HEARTBEAT_EVERY_MS = 30_000;

/** A turn's work under way, as the heartbeats see it. */
export interface BeatingWork {
  controller: AbortController;
  done: Promise<void>;
}

/** What the heartbeats ask of the driver: the work under way, and what the last answer said. */
export interface BeatingTurns {
  work(circuit: string): BeatingWork | undefined;
  /** The circuit's state in the last answer of `GET /api/me`. */
  stateOf(circuit: string): CircuitProgress['state'] | undefined;
}

/** Whether the coordinator holds this run's upload for `circuit` (being verified, or accepted). */
export async function hasUpload(api: DriverApi, circuit: string): Promise<boolean> {
  try {
    const me = await api.me(true);
    const state = me.status.circuits.find((c) => c.circuit === circuit)?.state;
    return state === 'verifying' || state === 'accepted';
  } catch {
    return false;
  }
}

export class Heartbeats {
  private everyMs = HEARTBEAT_EVERY_MS;
  private readonly beating = new Set<string>();

  constructor(
    private readonly options: DriverOptions,
    private readonly view: DriverView,
    private readonly clock: DriverClock,
    private readonly stopping: AbortSignal,
    private readonly turns: BeatingTurns,
  ) {}

  /** Heartbeats for `circuit` while its work is under way or (the page) the coordinator says it is this turn. */
  keep(circuit: string): void {
    if (this.beating.has(circuit)) return;
    this.beating.add(circuit);
    void this.beat(circuit).finally(() => this.beating.delete(circuit));
  }

  private held(circuit: string): boolean {
    if (this.stopping.aborted) return false;
    if (this.turns.work(circuit)) return true;
    return this.options.pollDuringTurns && this.turns.stateOf(circuit) === 'turn';
  }

  private async beat(circuit: string): Promise<void> {
    while (this.held(circuit)) {
      let wait = this.everyMs;
      try {
        const answer = await this.options.api.heartbeat(circuit);
        // Older coordinators answer the deadline only.
        if (Number.isFinite(answer.heartbeatEveryMs) && answer.heartbeatEveryMs > 0)
          this.everyMs = answer.heartbeatEveryMs;
        wait = this.everyMs;
        this.view.heartbeat?.(circuit, answer);
      } catch (error) {
        // The turn is gone (deadline passed, the coordinator took it): its work stops. Unless the
        // upload has just completed (the turn is the contribution being verified now), which the
        // coordinator can see before this client does. Anything else: the next beat tries again.
        const work = this.turns.work(circuit);
        if (
          this.options.confirmLostTurns &&
          work &&
          error instanceof ApiError &&
          LOST_TURN_CODES.has(error.code) &&
          !(await hasUpload(this.options.api, circuit))
        )
          work.controller.abort(error);
        if (this.options.heartbeatRetryMs !== undefined) wait = Math.min(this.options.heartbeatRetryMs, wait);
      }
      if (!this.held(circuit)) return;
      // The terminal's heartbeats end with the turn's work; the page's with the coordinator's turn.
      const over = new AbortController();
      if (!this.options.pollDuringTurns) void this.turns.work(circuit)?.done.then(() => over.abort());
      await sleep(this.clock, wait, AbortSignal.any([this.stopping, over.signal]));
    }
  }
}
