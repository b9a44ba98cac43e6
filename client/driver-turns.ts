/**
 * The contributor driver's turns (contributor-driver.ts): when a turn may start, the caller's work
 * on it (the head looked up, the bytes moved by `turn`, a standby turn confirmed taken) between
 * heartbeats, and how it ends: uploaded, taken by another entry first, or failed and paused.
 */
import type { CircuitProgress, MeView } from '../core/coordinator-api/api-types.ts';
import { ApiError } from './api-client.ts';
import { RunFailure, type DriverClock, type DriverOptions, type DriverView } from './contributor-driver-parts.ts';
import { hasUpload, Heartbeats } from './driver-heartbeats.ts';
import { failureKind, LOST_TURN_CODES } from './driver-retry.ts';

/** Why a turn's work was stopped by a poll: the coordinator took it back, or another entry took it (standby). */
export const TURN_GONE = Symbol('turn gone');

export interface TurnHold {
  controller: AbortController;
  done: Promise<void>;
  /** Started on a standby offer (DriverTurn.standby): its standbyUntil… */
  offer: number | undefined;
  /** …and the coordinator has said the turn is this contributor's since (granted turns: from the start). */
  taken: boolean;
}

/** What the turns ask of the driver. */
export interface TurnHost {
  /** The number of the last poll started (an answer to a later one may start a new turn). */
  pollsStarted(): number;
  /** One `GET /api/me`, `check`ed, then acted on as any answer. */
  confirm(check: (me: MeView) => void): Promise<void>;
  /** A request a steady run asks again through a busy coordinator (the driver's SteadyRequests). */
  steadily<T>(request: () => Promise<T>): Promise<T>;
  /** The circuit's state in the last answer. */
  stateOf(circuit: string): CircuitProgress['state'] | undefined;
  /** A turn's work ended, with the error that ends the run if any. */
  ended(failure: { error: unknown } | undefined): void;
}

export class Turns {
  private readonly tasks = new Map<string, TurnHold>();
  /** Per circuit: the poll after which `turn` means a new turn (an upload's), or when to try again (a failure's). */
  private readonly afterPoll = new Map<string, number>();
  private readonly retryAts = new Map<string, number>();
  private readonly attempts = new Map<string, number>();
  /** Per circuit: the standby offer (its standbyUntil) another entry took first; not taken up again. */
  private readonly standbyOffers = new Map<string, number>();
  private readonly localHashes = new Map<string, string>();
  private interruptedInARow = 0;
  private readonly heartbeats: Heartbeats;

  constructor(
    private readonly options: DriverOptions,
    private readonly view: DriverView,
    private readonly clock: DriverClock,
    private readonly stopping: AbortSignal,
    private readonly host: TurnHost,
  ) {
    this.heartbeats = new Heartbeats(options, view, clock, stopping, {
      work: (circuit) => this.tasks.get(circuit),
      stateOf: (circuit) => host.stateOf(circuit),
    });
  }

  get size(): number {
    return this.tasks.size;
  }

  get(circuit: string): TurnHold | undefined {
    return this.tasks.get(circuit);
  }

  all(): TurnHold[] {
    return [...this.tasks.values()];
  }

  retryAt(circuit: string): number | undefined {
    return this.retryAts.get(circuit);
  }

  /** The standby offer on `circuit` another entry took first (its standbyUntil), if any. */
  offerTakenElsewhere(circuit: string): number | undefined {
    return this.standbyOffers.get(circuit);
  }

  localHash(circuit: string): string | undefined {
    return this.localHashes.get(circuit);
  }

  rememberHash(circuit: string, hash: string): void {
    this.localHashes.set(circuit, hash);
  }

  forgetHash(circuit: string): void {
    this.localHashes.delete(circuit);
  }

  countAttempt(circuit: string): number {
    const attempts = (this.attempts.get(circuit) ?? 0) + 1;
    this.attempts.set(circuit, attempts);
    return attempts;
  }

  attemptsOf(circuit: string): number {
    return this.attempts.get(circuit) ?? 0;
  }

  keepBeating(circuit: string): void {
    this.heartbeats.keep(circuit);
  }

  /**
   * `turn` again after an upload is a new turn only in the answer to a poll made after it; after a
   * failure, once its pause is over.
   */
  mayStart(circuit: string, seq: number): boolean {
    if (this.options.joinAtStart && !this.options.joinAtStart.circuits.includes(circuit)) return false;
    const after = this.afterPoll.get(circuit);
    if (after !== undefined && seq <= after) return false;
    const retryAt = this.retryAts.get(circuit);
    return retryAt === undefined || this.clock.now() >= retryAt;
  }

  /** `offer`: the standbyUntil of the standby offer taken up; undefined: a granted turn. */
  start(circuit: string, offer: number | undefined): void {
    const controller = new AbortController();
    this.afterPoll.delete(circuit);
    this.retryAts.delete(circuit);
    const hold: TurnHold = { controller, done: Promise.resolve(), offer, taken: offer === undefined };
    this.tasks.set(circuit, hold);
    hold.done = this.takeTurn(circuit, hold).then(
      () => this.over(circuit, undefined),
      (error: unknown) => this.over(circuit, { error }),
    );
  }

  private over(circuit: string, failure: { error: unknown } | undefined): void {
    this.tasks.delete(circuit);
    this.host.ended(failure);
  }

  /**
   * One turn: the caller's work between heartbeats; its failure counted and said. A standby turn
   * beats only once taken (a heartbeat does not take a turn), and one another entry took first ends
   * quietly: no failure, no pause, back to waiting.
   */
  private async takeTurn(circuit: string, hold: TurnHold): Promise<void> {
    const { signal } = hold.controller;
    this.view.turnStarting?.(circuit, hold.offer !== undefined);
    await this.options.ready;
    if (hold.taken) this.keepBeating(circuit);
    let confirming: Promise<void> | undefined;
    try {
      // Taken at once, beside the ceremony view's round trip and its body (which grows with the
      // chains), not after them: a standby offer goes to whoever takes it first, and the entry
      // behind is offered it one step later.
      this.options.api.take?.(circuit, signal).catch(() => {});
      const ceremony = this.options.steady
        ? await this.host.steadily(() => this.options.api.ceremony())
        : await this.options.api.ceremony();
      const head = ceremony.circuits.find((c) => c.name === circuit);
      if (!head) {
        if (this.options.steady) throw new RunFailure('circuit.unknown', `the coordinator no longer lists ${circuit}`);
        throw new ApiError(404, 'circuit.unknown', circuit);
      }
      await this.options.turn({
        circuit,
        ceremony,
        headIndex: head.headIndex,
        headFileHash: head.headHash,
        signal,
        onHash: (hash) => this.localHashes.set(circuit, hash),
        standby: hold.offer !== undefined,
        taken: () => (confirming ??= this.confirmTaken(circuit, hold)),
      });
      this.interruptedInARow = 0;
      this.uploaded(circuit, false);
    } catch (error) {
      await this.turnEndedEarly(circuit, hold, error);
    }
  }

  /** A turn whose work ended without an upload: dropped, taken elsewhere, uploaded after all, or failed. */
  private async turnEndedEarly(circuit: string, hold: TurnHold, error: unknown): Promise<void> {
    const { signal } = hold.controller;
    const elsewhere = !hold.taken && !this.stopping.aborted;
    if (this.stopping.aborted || signal.reason === TURN_GONE) {
      if (elsewhere) this.takenElsewhere(circuit, hold);
      this.view.turnDropped?.(circuit);
      return;
    }
    const reason: unknown = signal.aborted ? signal.reason : error;
    if (!(reason instanceof ApiError)) throw reason;
    // Not taken yet, the upload (or anything) refused as not this turn: another entry took it first.
    if (elsewhere && LOST_TURN_CODES.has(reason.code)) {
      this.takenElsewhere(circuit, hold);
      this.view.turnDropped?.(circuit);
      return;
    }
    if (
      this.options.confirmLostTurns &&
      LOST_TURN_CODES.has(reason.code) &&
      (await hasUpload(this.options.api, circuit))
    )
      return this.uploaded(circuit, true);
    this.turnFailed(circuit, reason);
  }

  /**
   * After a standby turn's first download: one `GET /api/me` (acted on as any answer) says whether
   * that download took the turn. If not, the turn's work is given up (rejects with the abort);
   * if so, it goes on as a granted turn, heartbeats and all.
   */
  private async confirmTaken(circuit: string, hold: TurnHold): Promise<void> {
    if (!hold.taken) {
      await this.host.confirm((me) => {
        hold.taken = me.status.circuits.find((c) => c.circuit === circuit)?.state === 'turn';
      });
      if (!hold.taken) hold.controller.abort(TURN_GONE);
    }
    if (hold.controller.signal.aborted) throw new DOMException('the turn was given up', 'AbortError');
    this.keepBeating(circuit);
  }

  /** A standby turn another entry took first: said, and that offer is not taken up again. */
  private takenElsewhere(circuit: string, hold: TurnHold): void {
    this.standbyOffers.set(circuit, hold.offer!);
    this.view.standbyTakenElsewhere?.(circuit);
  }

  private uploaded(circuit: string, answerLost: boolean): void {
    this.afterPoll.set(circuit, this.host.pollsStarted());
    this.view.uploaded?.(circuit, answerLost);
  }

  private turnFailed(circuit: string, error: ApiError): void {
    const retryAt = this.clock.now() + this.options.turnRetryPauseMs;
    this.retryAts.set(circuit, retryAt);
    const kind = failureKind(error);
    if (kind === 'interrupted') this.interruptedInARow++;
    const attempts = kind === 'refused' ? this.countAttempt(circuit) : this.attemptsOf(circuit);
    this.view.turnFailed?.(circuit, error, { kind, inARow: this.interruptedInARow, attempts, retryAt });
  }
}
