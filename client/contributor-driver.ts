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
import type { MeView } from '../core/coordinator-api/api-types.ts';
import { terminalWords } from '../core/error-messages.ts';
import { ApiError } from './api-client.ts';
import {
  isJoined,
  REAL_CLOCK,
  RunFailure,
  type DriverClock,
  type DriverOptions,
  type DriverView,
  type HeldPoll,
  type TurnFailure,
} from './contributor-driver-parts.ts';
import {
  ACTIVE_POLL_MS,
  HELD_POLL_EVERY_MS,
  holdsPollForTurn,
  TURN_WAIT_MS,
  VERDICT_POLL_MS,
  VERDICT_WAIT_MS,
  waitingPollMs,
} from './queue-poll-pace.ts';
import { looksLikeRestart, RESTART_RIDE_OUT_MS } from './restart-retry.ts';
import { duration } from './run-words.ts';

/** A coordinator busy this long (rate limits, its own errors) ends a steady run (a turn would be missed anyway). */
const BUSY_FOR_MS = 10 * 60_000;
/** The heartbeat pace until the coordinator's first answer sets its own (it ends silent turns). */
const HEARTBEAT_EVERY_MS = 30_000;
/** Poll pace when in no queue (done, or not joined yet); in a queue, queue-poll-pace.ts. */
const NOT_WAITING_POLL_MS = 5000;
const LOST_TURN_CODES = new Set(['lobby.not_your_turn', 'lobby.already_contributed']);
/** Why a turn's work was stopped by a poll: the coordinator took it back, or another entry took it (standby). */
const TURN_GONE = Symbol('turn gone');
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

interface TurnHold {
  controller: AbortController;
  done: Promise<void>;
  /** Started on a standby offer (DriverTurn.standby): its standbyUntil… */
  offer: number | undefined;
  /** …and the coordinator has said the turn is this contributor's since (granted turns: from the start). */
  taken: boolean;
}

export class ContributorDriver {
  private me: MeView | null = null;
  private readonly clock: DriverClock;
  private readonly view: DriverView;
  private readonly stopping = new AbortController();
  private readonly tasks = new Map<string, TurnHold>();
  private readonly beating = new Set<string>();
  /** Per circuit: the poll after which `turn` means a new turn (an upload's), or when to try again (a failure's). */
  private readonly afterPoll = new Map<string, number>();
  private readonly retryAt = new Map<string, number>();
  private readonly attempts = new Map<string, number>();
  /** Contributions whose verdict is already known (at the start, or told since). */
  private readonly announced = new Set<string>();
  private readonly localHashes = new Map<string, string>();
  private heartbeatEveryMs = HEARTBEAT_EVERY_MS;
  private interruptedInARow = 0;
  private busySince: number | undefined;
  private pollsStarted = 0;
  private failure: { error: unknown } | undefined;
  private wake: (() => void) | undefined;
  private pollAgain = false;
  private rearmOnly = false;
  private polled: Array<() => void> = [];
  /** Per circuit: the standby offer (its standbyUntil) another entry took first; not taken up again. */
  private readonly standbyOffers = new Map<string, number>();
  /** When the last poll started, to pace held polls; the held poll under way, given up by pollNow. */
  private lastPollAt = -Infinity;
  /** Whether the last answer changed a circuit's state, place, cooldown or standby offer (lineKey). */
  private lastAnswerChanged = false;
  private heldPoll: AbortController | undefined;
  /** An older coordinator that refuses turnWaitMs (400): timed polls for the rest of the run. */
  private turnWaitRefused = false;
  private heldPollsRefusedUntil = -Infinity;

  constructor(private readonly options: DriverOptions) {
    this.clock = options.clock ?? REAL_CLOCK;
    this.view = options.view ?? {};
  }

  /** Whether the caller's work on a turn is under way. */
  get turnsUnderWay(): number {
    return this.tasks.size;
  }

  hasTask(circuit: string): boolean {
    return this.tasks.has(circuit);
  }

  /** The contribution hash computed here for `circuit` (this run's or, when told, an earlier one's). */
  localHash(circuit: string): string | undefined {
    return this.localHashes.get(circuit);
  }

  rememberHash(circuit: string, hash: string): void {
    this.localHashes.set(circuit, hash);
  }

  forgetHash(circuit: string): void {
    this.localHashes.delete(circuit);
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
      await Promise.all([...this.tasks.values()].map((task) => task.done));
    }
  }

  /** Stops polling and any turn under way, and lets go of the presence stream. */
  stop(reason?: unknown): void {
    if (!this.stopping.signal.aborted) this.stopping.abort(reason);
    this.options.presence?.hold(false);
    for (const task of this.tasks.values()) task.controller.abort(reason);
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
    this.heldPoll?.abort();
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
    if (turn && !chosen.includes(turn.circuit) && !this.tasks.has(turn.circuit)) {
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
        const tasks = [...this.tasks.values()].map((task) => task.done);
        if (!this.options.pollDuringTurns && tasks.length > 0) {
          void Promise.all(tasks).then(() => finish(true));
          cancel = () => {};
        } else cancel = this.clock.after(this.pace(this.me ?? me ?? null), () => finish(true));
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

  /** Resolves after `ms` on the clock, or at once when `signal` aborts. */
  private sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      let cancel = (): void => {};
      const done = (): void => {
        cancel();
        signal.removeEventListener('abort', done);
        resolve();
      };
      signal.addEventListener('abort', done, { once: true });
      cancel = this.clock.after(ms, done);
    });
  }

  /** The pause before the next poll: by the best waiting position across circuits (queue-poll-pace.ts). */
  private pace(me: MeView | null): number {
    if (!me || me.status.done || !isJoined(me)) return NOT_WAITING_POLL_MS;
    const circuits = me.status.circuits;
    if (circuits.some((c) => c.state === 'verifying')) return VERDICT_POLL_MS;
    const turn = circuits.find((c) => c.state === 'turn');
    if (turn) {
      const retryAt = this.retryAt.get(turn.circuit);
      // The terminal does not poll while its turn is paused after a failure: it takes it again after the pause.
      if (!this.options.pollDuringTurns && retryAt !== undefined)
        return Math.max(ACTIVE_POLL_MS, retryAt - this.clock.now());
      return ACTIVE_POLL_MS;
    }
    // A held poll answers when something changes: the next starts at once after a change (a standby
    // offer comes a priority after the place moved), else not more often than before (a coordinator
    // that does not hold polls answers at once with nothing new).
    if (this.turnWaitMs() !== undefined)
      return this.lastAnswerChanged ? 0 : Math.max(0, this.lastPollAt + HELD_POLL_EVERY_MS - this.clock.now());
    return waitingPollMs(this.front(circuits));
  }

  /** The best waiting position across circuits (Infinity: waiting nowhere). */
  private front(circuits: MeView['status']['circuits']): number {
    return Math.min(Infinity, ...circuits.flatMap((c) => (c.state === 'waiting' ? [c.position] : [])));
  }

  /**
   * How long the next poll may be held for a turn (`GET /api/me?turnWaitMs`): within reach of one, with no
   * turn or verification under way (their polls are paced on their own), unless the coordinator
   * refused held polls; undefined: answered at once.
   */
  private turnWaitMs(): number | undefined {
    const me = this.me;
    if (!me || me.status.done || !isJoined(me) || this.tasks.size > 0 || this.turnWaitRefused) return undefined;
    if (this.clock.now() < this.heldPollsRefusedUntil) return undefined;
    const circuits = me.status.circuits;
    if (circuits.some((c) => c.state === 'turn' || c.state === 'verifying')) return undefined;
    return holdsPollForTurn(this.front(circuits)) ? TURN_WAIT_MS : undefined;
  }

  /** How long the next poll may be held for a verdict (holdPollsForVerdicts); undefined: answered at once. */
  private verdictWaitMs(): number | undefined {
    if (!this.options.holdPollsForVerdicts || !this.me) return undefined;
    const circuits = this.me.status.circuits;
    const verifying = circuits.some((c) => c.state === 'verifying');
    const inLine = circuits.some((c) => c.state === 'waiting' || c.state === 'turn');
    return verifying && !inLine ? VERDICT_WAIT_MS : undefined;
  }

  /** One `GET /api/me`, acted on; undefined when it got no answer (the page: told, and polled again later). */
  private async poll(): Promise<MeView | undefined> {
    const seq = ++this.pollsStarted;
    this.pollAgain = false;
    this.lastPollAt = this.clock.now();
    try {
      const verdictWaitMs = this.verdictWaitMs();
      const turnWaitMs = verdictWaitMs === undefined ? this.turnWaitMs() : undefined;
      const me = await this.askMe(
        verdictWaitMs !== undefined ? { verdictWaitMs } : turnWaitMs !== undefined ? { turnWaitMs } : undefined,
      );
      this.lastAnswerChanged = this.me !== null && lineKey(me) !== lineKey(this.me);
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

  /**
   * One `GET /api/me`, held as `hold` says. A held poll the coordinator refuses (too many held: another
   * tab or run holds some; 400: an older coordinator without turnWaitMs) is asked again at once,
   * unheld, and polls are timed as before: for a while, or (400) for the rest of the run.
   */
  private async askMe(hold: HeldPoll | undefined): Promise<MeView> {
    const ask = (held?: HeldPoll): Promise<MeView> =>
      this.options.steady ? this.steadily(() => this.options.api.me(true, held)) : this.options.api.me(false, held);
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
      return await ask({ ...hold, signal: AbortSignal.any([given.signal, this.stopping.signal]) });
    } catch (error) {
      if (this.stopping.signal.aborted) throw this.stopping.signal.reason;
      if (given.signal.aborted) {
        // pollNow: this unheld poll is the one it asked for.
        this.pollAgain = false;
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

  private settlePolled(): void {
    const waiting = this.polled;
    this.polled = [];
    for (const resolve of waiting) resolve();
  }

  private steadyJoin(): Promise<MeView> {
    const choice = this.options.joinAtStart;
    const circuits = choice && !choice.everyCircuit ? choice.circuits : undefined;
    const seq = ++this.pollsStarted;
    return this.steadily(() => this.options.api.join(circuits)).then((me) => (this.answer(me, seq), me));
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
        this.countAttempt(contribution.circuit);
      this.view.verdict?.(contribution, this.attempts.get(contribution.circuit) ?? 0);
    }
    this.view.answered?.(me);
    if (this.options.holdPresence !== 'run')
      this.options.presence?.hold(isJoined(me) && !me.status.done && !this.stopping.signal.aborted);
    if (this.stopping.signal.aborted) return;
    for (const progress of me.status.circuits) {
      const { circuit } = progress;
      const task = this.tasks.get(circuit);
      const offered = progress.state === 'waiting' ? progress.standbyUntil : undefined;
      if (progress.state === 'turn') {
        if (task) task.taken = true;
        if (!task && this.mayStart(circuit, seq)) this.startTurn(circuit, undefined);
        else if (this.options.pollDuringTurns) this.keepBeating(circuit);
      } else if (offered !== undefined && !task) {
        // A turn granted ahead and not taken, offered on standby: taken as a granted one would be.
        if (this.mayStart(circuit, seq) && this.standbyOffers.get(circuit) !== offered)
          this.startTurn(circuit, offered);
      } else if (task && (progress.state === 'waiting' || progress.state === 'pending')) {
        // The turn is gone (deadline missed, the ceremony moved on, or another entry took the one
        // offered on standby): its work stops. A standby turn still offered is being taken. Once
        // uploaded (verifying, accepted) the work is finishing by itself and is left alone.
        if (task.offer === undefined || offered === undefined) task.controller.abort(TURN_GONE);
      }
    }
  }

  private countAttempt(circuit: string): number {
    const attempts = (this.attempts.get(circuit) ?? 0) + 1;
    this.attempts.set(circuit, attempts);
    return attempts;
  }

  /**
   * `turn` again after an upload is a new turn only in the answer to a poll made after it; after a
   * failure, once its pause is over.
   */
  private mayStart(circuit: string, seq: number): boolean {
    if (this.options.joinAtStart && !this.options.joinAtStart.circuits.includes(circuit)) return false;
    const after = this.afterPoll.get(circuit);
    if (after !== undefined && seq <= after) return false;
    const retryAt = this.retryAt.get(circuit);
    return retryAt === undefined || this.clock.now() >= retryAt;
  }

  /** `offer`: the standbyUntil of the standby offer taken up; undefined: a granted turn. */
  private startTurn(circuit: string, offer: number | undefined): void {
    const controller = new AbortController();
    this.afterPoll.delete(circuit);
    this.retryAt.delete(circuit);
    const hold: TurnHold = { controller, done: Promise.resolve(), offer, taken: offer === undefined };
    this.tasks.set(circuit, hold);
    hold.done = this.takeTurn(circuit, hold).then(
      () => this.turnOver(circuit),
      (error: unknown) => {
        this.failure ??= { error };
        this.turnOver(circuit);
      },
    );
  }

  private turnOver(circuit: string): void {
    this.tasks.delete(circuit);
    if (!this.stopping.signal.aborted) void this.pollNow();
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
      const ceremony = this.options.steady
        ? await this.steadily(() => this.options.api.ceremony())
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
      const elsewhere = !hold.taken && !this.stopping.signal.aborted;
      if (this.stopping.signal.aborted || signal.reason === TURN_GONE) {
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
      if (this.options.confirmLostTurns && LOST_TURN_CODES.has(reason.code) && (await this.hasUpload(circuit)))
        return this.uploaded(circuit, true);
      this.turnFailed(circuit, reason);
    }
  }

  /**
   * After a standby turn's first download: one `GET /api/me` (acted on as any answer) says whether
   * that download took the turn. If not, the turn's work is given up (rejects with the abort);
   * if so, it goes on as a granted turn, heartbeats and all.
   */
  private async confirmTaken(circuit: string, hold: TurnHold): Promise<void> {
    if (!hold.taken) {
      const seq = ++this.pollsStarted;
      const me = await this.askMe(undefined);
      hold.taken = me.status.circuits.find((c) => c.circuit === circuit)?.state === 'turn';
      this.answer(me, seq);
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
    this.afterPoll.set(circuit, this.pollsStarted);
    this.view.uploaded?.(circuit, answerLost);
  }

  private turnFailed(circuit: string, error: ApiError): void {
    const retryAt = this.clock.now() + this.options.turnRetryPauseMs;
    this.retryAt.set(circuit, retryAt);
    let kind: TurnFailure['kind'] = 'refused';
    if (LOST_TURN_CODES.has(error.code)) kind = 'lost';
    else if (error.code === 'network' || error.status >= 500) kind = 'interrupted';
    if (kind === 'interrupted') this.interruptedInARow++;
    const attempts = kind === 'refused' ? this.countAttempt(circuit) : (this.attempts.get(circuit) ?? 0);
    this.view.turnFailed?.(circuit, error, { kind, inARow: this.interruptedInARow, attempts, retryAt });
  }

  /** Heartbeats for `circuit` while its work is under way or (the page) the coordinator says it is this turn. */
  private keepBeating(circuit: string): void {
    if (this.beating.has(circuit)) return;
    this.beating.add(circuit);
    void this.beat(circuit).finally(() => this.beating.delete(circuit));
  }

  private turnHeld(circuit: string): boolean {
    if (this.stopping.signal.aborted) return false;
    if (this.tasks.has(circuit)) return true;
    return (
      this.options.pollDuringTurns && this.me?.status.circuits.find((c) => c.circuit === circuit)?.state === 'turn'
    );
  }

  private async beat(circuit: string): Promise<void> {
    while (this.turnHeld(circuit)) {
      let wait = this.heartbeatEveryMs;
      try {
        const answer = await this.options.api.heartbeat(circuit);
        // Older coordinators answer the deadline only.
        if (Number.isFinite(answer.heartbeatEveryMs) && answer.heartbeatEveryMs > 0)
          this.heartbeatEveryMs = answer.heartbeatEveryMs;
        wait = this.heartbeatEveryMs;
        this.view.heartbeat?.(circuit, answer);
      } catch (error) {
        // The turn is gone (deadline passed, the coordinator took it): its work stops. Unless the
        // upload has just completed (the turn is the contribution being verified now), which the
        // coordinator can see before this client does. Anything else: the next beat tries again.
        const task = this.tasks.get(circuit);
        if (
          this.options.confirmLostTurns &&
          task &&
          error instanceof ApiError &&
          LOST_TURN_CODES.has(error.code) &&
          !(await this.hasUpload(circuit))
        )
          task.controller.abort(error);
        if (this.options.heartbeatRetryMs !== undefined) wait = Math.min(this.options.heartbeatRetryMs, wait);
      }
      if (!this.turnHeld(circuit)) return;
      // The terminal's heartbeats end with the turn's work; the page's with the coordinator's turn.
      const over = new AbortController();
      if (!this.options.pollDuringTurns) void this.tasks.get(circuit)?.done.then(() => over.abort());
      await this.sleep(wait, AbortSignal.any([this.stopping.signal, over.signal]));
    }
  }

  /** Whether the coordinator holds this run's upload for `circuit` (being verified, or accepted). */
  private async hasUpload(circuit: string): Promise<boolean> {
    try {
      const me = await this.options.api.me(true);
      const state = me.status.circuits.find((c) => c.circuit === circuit)?.state;
      return state === 'verifying' || state === 'accepted';
    } catch {
      return false;
    }
  }

  /**
   * A call a steady run cannot do without: a busy coordinator (rate limits, a 5xx of its own) is
   * asked again with growing pauses (said once), an ended session is signed in again. A coordinator
   * that does not answer has been asked again by the client for RESTART_RIDE_OUT_MS already: that
   * ends the run. Anything else is thrown.
   */
  private async steadily<T>(request: () => Promise<T>): Promise<T> {
    let wait = 1000;
    for (;;) {
      try {
        const answer = await request();
        if (this.busySince !== undefined) this.view.note?.('the coordinator answers again');
        this.busySince = undefined;
        return answer;
      } catch (error) {
        if (this.stopping.signal.aborted || !(error instanceof ApiError)) throw error;
        if (error.code === 'auth.required') {
          this.view.note?.('the session ended; signing in again');
          await this.options.steady!.signInAgain();
          continue;
        }
        this.throwIfFatal(error);
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
        await this.sleep(Math.max(wait, (error.retryAfterSeconds ?? 0) * 1000), this.stopping.signal);
        wait = Math.min(wait * 2, 30_000);
      }
    }
  }

  /** Throws what a steady run cannot get past: the ceremony over, the coordinator gone, a refusal not for load. */
  private throwIfFatal(error: ApiError): void {
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
}
