/**
 * The contributor protocol's one state machine, for the page (web/src/contribute/contributor-session.ts)
 * and the terminal (cli/contributor/contributor-run.ts), driven by `GET /api/me` (the source of
 * truth, so a reload or a rerun after a crash picks up where the lobby stands):
 *
 *   join → waiting (polled at the paced interval) → turn (heartbeats at the coordinator's pace;
 *   the caller's turn: download, contribute, upload) → verifying → accepted
 *               ↑                          │ refused, missed, broken off: back in the queue
 *               └──────────────────────────┘
 *
 * What each side does differently is an option: the terminal joins at once with its chosen
 * circuits, waits for a turn to end before polling again, asks again through a busy or restarting
 * coordinator and ends the run on what it cannot get past (`steady`); the page joins when asked,
 * polls on during turns (a turn the coordinator took back is stopped at the next poll) and shows
 * a poll that got no answer while polling on. Words, storage and the bytes of a turn are the
 * caller's (`view`, `turn`); every wait is the clock's, so tests drive it by hand.
 */
import type { CircuitProgress, MeView } from '../core/coordinator-api/api-types.ts';
import {
  isJoined,
  REAL_CLOCK,
  RunFailure,
  type DriverClock,
  type DriverOptions,
  type DriverView,
  type HeldPoll,
} from './contributor-driver-parts.ts';
import { PollPace } from './driver-polls.ts';
import { SteadyRequests } from './driver-retry.ts';
import { TURN_GONE, Turns } from './driver-turns.ts';

export class ContributorDriver {
  private me: MeView | null = null;
  private readonly clock: DriverClock;
  private readonly view: DriverView;
  private readonly stopping = new AbortController();
  private readonly turns: Turns;
  private readonly polling: PollPace;
  private readonly steady: SteadyRequests;
  /** Contributions whose verdict is already known (at the start, or told since). */
  private readonly announced = new Set<string>();
  private pollsStarted = 0;
  private failure: { error: unknown } | undefined;
  private wake: (() => void) | undefined;
  private pollAgain = false;
  private rearmOnly = false;
  private polled: Array<() => void> = [];

  constructor(private readonly options: DriverOptions) {
    this.clock = options.clock ?? REAL_CLOCK;
    this.view = options.view ?? {};
    const stopping = this.stopping.signal;
    this.polling = new PollPace(this.clock, options);
    this.steady = new SteadyRequests(this.clock, this.view, stopping, options.steady);
    this.turns = new Turns(options, this.view, this.clock, stopping, {
      pollsStarted: () => this.pollsStarted,
      confirm: (check) => this.confirm(check),
      steadily: (request) => this.steady.ask(request),
      stateOf: (circuit) => this.me?.status.circuits.find((c) => c.circuit === circuit)?.state,
      ended: (failure) => {
        if (failure) this.failure ??= failure;
        if (!this.stopping.signal.aborted) void this.pollNow();
      },
    });
  }

  /** Whether the caller's work on a turn is under way. */
  get turnsUnderWay(): number {
    return this.turns.size;
  }

  hasTask(circuit: string): boolean {
    return this.turns.get(circuit) !== undefined;
  }

  /** The contribution hash computed here for `circuit` (this run's or, when told, an earlier one's). */
  localHash(circuit: string): string | undefined {
    return this.turns.localHash(circuit);
  }

  rememberHash(circuit: string, hash: string): void {
    this.turns.rememberHash(circuit, hash);
  }

  forgetHash(circuit: string): void {
    this.turns.forgetHash(circuit);
  }

  /**
   * Polls until the chosen circuits are all accepted (`joinAtStart`) or `stop()`; rejects with a
   * RunFailure, a refusal it cannot get past, or the stop's reason.
   */
  async run(): Promise<void> {
    if (this.options.holdPresence === 'run') this.options.presence?.hold(true);
    try {
      await this.runInLine();
    } finally {
      this.stop();
      await this.options.presence?.stop();
      await Promise.all(this.turns.all().map((task) => task.done));
    }
  }

  /** Stops polling and any turn under way, and lets go of the presence stream. */
  stop(reason?: unknown): void {
    if (!this.stopping.signal.aborted) this.stopping.abort(reason);
    this.options.presence?.hold(false);
    for (const task of this.turns.all()) task.controller.abort(reason);
    this.settlePolled();
  }

  /**
   * Joins (the page's button): every circuit, or the ones chosen; the answer counts as a poll. A
   * refusal is the caller's to show.
   */
  async join(): Promise<void> {
    const seq = ++this.pollsStarted;
    const choice = this.options.joinAtStart;
    const me = await this.options.api.join(choice?.everyCircuit === false ? choice.circuits : undefined);
    this.answer(me, seq);
    this.rearmOnly = true;
    this.wake?.();
  }

  /**
   * Polls now (the next one as soon as the one under way answers: an upload that completed
   * meanwhile must not wait a whole interval for its verdict); resolves once that poll is done.
   */
  pollNow(): Promise<void> {
    const done = this.nextPoll();
    this.pollAgain = true;
    // A poll held for a turn would answer up to TURN_WAIT_MS later: it is asked again, unheld, at once.
    this.polling.giveUpHeld();
    this.wake?.();
    return done;
  }

  /** Resolves once the next poll (or the one under way) is done, answered or not. */
  nextPoll(): Promise<void> {
    if (this.stopping.signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => this.polled.push(resolve));
  }

  private async runInLine(): Promise<void> {
    const start = this.options.joinAtStart;
    let me = await this.poll();
    if (start && me && !this.finished(me)) me = await this.steadyJoin();
    let nowhere = 0;
    for (;;) {
      this.throwIfOver();
      if (start && me) {
        if (this.finished(me)) return;
        const moved = await this.moveInLine(me, ++nowhere);
        if (moved) {
          me = moved;
          continue;
        }
        nowhere = 0;
      }
      me = (await this.waitThenPoll(me)) ?? me;
    }
  }

  private throwIfOver(): void {
    if (this.failure) throw this.failure.error;
    if (this.stopping.signal.aborted) throw this.stopping.signal.reason;
  }

  /**
   * The terminal's own moves in line: a turn granted on a circuit not asked for (by an earlier join,
   * the page's or another run's) is given up at once, so the next in line gets it, and the chosen
   * circuits are joined again; in no queue, turn or verification with circuits left (a verdict
   * queued us nowhere), joined again, and a third time nowhere ends the run. The new answer, or
   * undefined when there is nothing to do.
   */
  private async moveInLine(me: MeView, nowhere: number): Promise<MeView | undefined> {
    const chosen = this.options.joinAtStart!.circuits;
    const turn = me.status.circuits.find((c) => c.state === 'turn');
    if (turn && !chosen.includes(turn.circuit) && !this.turns.get(turn.circuit)) {
      this.view.note?.(`${turn.circuit}: giving up your turn there (it is not among the circuits asked for)`);
      await this.options.api.leave();
      return this.steadyJoin();
    }
    const inLine = me.status.circuits.some(
      (c) => c.state === 'turn' || c.state === 'verifying' || c.state === 'waiting',
    );
    if (inLine) return undefined;
    if (nowhere > 2)
      throw new RunFailure(
        'lobby.not_queued',
        'the coordinator keeps this contributor in no queue; run the command again',
      );
    return this.steadyJoin();
  }

  private finished(me: MeView): boolean {
    const chosen = this.options.joinAtStart?.circuits;
    return (
      chosen !== undefined &&
      chosen.every((circuit) => me.status.circuits.find((c) => c.circuit === circuit)?.state === 'accepted')
    );
  }

  /**
   * Polls once the pace `me` calls for has passed, the turn under way has ended (the terminal), or a
   * poll is asked for; undefined once stopped. The poll goes out in the timer's own callback.
   */
  private waitThenPoll(me: MeView | undefined): Promise<MeView | undefined> {
    this.rearmOnly = false;
    return new Promise((resolve, reject) => {
      let cancel = (): void => {};
      let over = false;
      const finish = (poll: boolean): void => {
        if (over) return;
        over = true;
        cancel();
        this.wake = undefined;
        this.stopping.signal.removeEventListener('abort', stopped);
        if (poll) this.poll().then(resolve, reject);
        else resolve(undefined);
      };
      const stopped = (): void => finish(false);
      const arm = (): void => {
        cancel();
        if (this.pollAgain) return finish(true);
        const tasks = this.turns.all().map((task) => task.done);
        if (!this.options.pollDuringTurns && tasks.length > 0) {
          void Promise.all(tasks).then(() => finish(true));
          cancel = () => {};
        } else
          cancel = this.clock.after(this.polling.pace(this.me ?? me ?? null, this.me, this.turns), () => finish(true));
      };
      this.wake = () => {
        if (!this.rearmOnly) return finish(true);
        this.rearmOnly = false;
        arm();
      };
      if (this.stopping.signal.aborted) return resolve(undefined);
      this.stopping.signal.addEventListener('abort', stopped, { once: true });
      arm();
    });
  }

  /** One `GET /api/me`, acted on; undefined when it got no answer (the page: told, and polled again later). */
  private async poll(): Promise<MeView | undefined> {
    const seq = ++this.pollsStarted;
    this.pollAgain = false;
    this.polling.started();
    try {
      const me = await this.askMe(this.polling.holdFor(this.me, this.turns.size));
      this.polling.answered(this.me, me);
      this.answer(me, seq);
      return me;
    } catch (error) {
      if (this.options.steady || this.stopping.signal.aborted) throw error;
      this.view.unanswered?.(error);
      return undefined;
    } finally {
      this.settlePolled();
    }
  }

  /** One `GET /api/me`, held as `hold` says (PollPace.ask); a steady run asks again through a busy coordinator. */
  private askMe(hold: HeldPoll | undefined): Promise<MeView> {
    const ask = (held?: HeldPoll): Promise<MeView> =>
      this.options.steady ? this.steady.ask(() => this.options.api.me(true, held)) : this.options.api.me(false, held);
    // Given up by pollNow: the unheld poll asked again is the one it asked for.
    return this.polling.ask(ask, hold, this.stopping.signal, () => (this.pollAgain = false));
  }

  /** A standby turn's confirm: one `GET /api/me`, checked by the turn, then acted on as any answer. */
  private async confirm(check: (me: MeView) => void): Promise<void> {
    const seq = ++this.pollsStarted;
    const me = await this.askMe(undefined);
    check(me);
    this.answer(me, seq);
  }

  private settlePolled(): void {
    const waiting = this.polled;
    this.polled = [];
    for (const resolve of waiting) resolve();
  }

  private steadyJoin(): Promise<MeView> {
    const choice = this.options.joinAtStart;
    const circuits = choice && !choice.everyCircuit ? choice.circuits : undefined;
    const seq = ++this.pollsStarted;
    return this.steady.ask(() => this.options.api.join(circuits)).then((me) => (this.answer(me, seq), me));
  }

  /** Acts on an answer: verdicts told, the presence stream held or let go, turns started or stopped. */
  private answer(me: MeView, seq: number): void {
    // Verdicts known at the start are not news.
    if (!this.me) for (const c of me.contributions) if (c.status !== 'verifying') this.announced.add(c.id);
    this.me = me;
    const fresh = me.contributions
      .filter((c) => c.status !== 'verifying' && !this.announced.has(c.id))
      .sort((a, b) => a.createdAt - b.createdAt);
    for (const contribution of fresh) {
      this.announced.add(contribution.id);
      if (contribution.status !== 'accepted' && contribution.status !== 'discarded')
        this.turns.countAttempt(contribution.circuit);
      this.view.verdict?.(contribution, this.turns.attemptsOf(contribution.circuit));
    }
    this.view.answered?.(me);
    if (this.options.holdPresence !== 'run')
      this.options.presence?.hold(isJoined(me) && !me.status.done && !this.stopping.signal.aborted);
    if (this.stopping.signal.aborted) return;
    for (const progress of me.status.circuits) this.actOn(progress, seq);
  }

  /** Starts or stops the turn on one circuit as its progress in the answer to poll `seq` says. */
  private actOn(progress: CircuitProgress, seq: number): void {
    const { circuit } = progress;
    const task = this.turns.get(circuit);
    const offered = progress.state === 'waiting' ? progress.standbyUntil : undefined;
    if (progress.state === 'turn') {
      if (task) task.taken = true;
      if (!task && this.turns.mayStart(circuit, seq)) this.turns.start(circuit, undefined);
      else if (this.options.pollDuringTurns) this.turns.keepBeating(circuit);
    } else if (offered !== undefined && !task) {
      // A turn granted ahead and not taken, offered on standby: taken as a granted one would be.
      if (this.turns.mayStart(circuit, seq) && this.turns.offerTakenElsewhere(circuit) !== offered)
        this.turns.start(circuit, offered);
    } else if (task && (progress.state === 'waiting' || progress.state === 'pending')) {
      // The turn is gone (deadline missed, the ceremony moved on, or another entry took the one
      // offered on standby): its work stops. A standby turn still offered is being taken. Once
      // uploaded (verifying, accepted) the work is finishing by itself and is left alone.
      if (task.offer === undefined || offered === undefined) task.controller.abort(TURN_GONE);
    }
  }
}
