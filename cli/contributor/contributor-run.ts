/**
 * A terminal contributor's whole run against a coordinator, after sign-in, on the same turn
 * protocol as the page (web/src/contribute/contributor-session.ts), driven by `GET /api/me` (the
 * source of truth, so a rerun after a crash picks up where the lobby stands):
 *
 *   join (every circuit, or the ones asked for) → waiting (position, ETA) → turn (heartbeats every
 *   30 s; download, contribute, upload: the TurnProtocol) → verifying → accepted, next circuit
 *                        ↑                         │ refused, error: back in the queue, said why
 *                        └─────────────────────────┘
 *
 * Every verdict that arrives during the run is said in plain words (the page's table,
 * core/error-messages.ts); an acceptance the coordinator no longer has (it went back to an earlier
 * state: a backup restored after a lost disk) is said too, and that circuit is taken again; each
 * accepted circuit gets one line on stdout
 * (`CIRCUIT #INDEX contribution hash HASH`, as `ceremony contribute` prints locally). The run ends
 * when every chosen circuit is accepted, or with a failure: too many refusals of one circuit, the
 * entry removed, the ceremony closed, the coordinator out of reach for too long.
 */
import { terminalWords } from '../../core/error-messages.ts';
import { VERDICT_POLL_MS, VERDICT_WAIT_MS, waitingPollMs } from '../../client/queue-poll-pace.ts';
import { presenceAdvice } from '../../core/queue-log/presence-words.ts';
import type {
  CeremonyView,
  CircuitProgress,
  ContributionView,
  MeView,
  TurnHeartbeat,
} from '../../core/coordinator-api/api-types.ts';
import { looksLikeRestart, RESTART_RIDE_OUT_MS } from '../../client/restart-retry.ts';
import { ApiError } from '../../client/api-client.ts';
import { PresenceHold } from './presence-stream.ts';
import type { TurnResult } from './turn-protocol.ts';
import {
  RunFailure,
  type AcceptedCircuit,
  type ContributorRunOptions,
  type RunActivity,
} from './contributor-run-options.ts';
import { duration, ordinal, seconds } from './run-words.ts';

/** A coordinator busy this long (rate limits, its own errors) ends the run (a turn would be missed anyway). */
const BUSY_FOR_MS = 10 * 60_000;
/** The heartbeat pace until the coordinator's first answer sets its own (it ends silent turns). */
const HEARTBEAT_EVERY_MS = 30_000;
/** A turn that broke off (a dropped download, a damaged one) is taken again after this pause… */
const TURN_RETRY_PAUSE_MS = 2000;
/** …at most this many times in a row. */
const TURN_FAILURES_IN_A_ROW = 5;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

export class ContributorRun {
  private activityNow: RunActivity = { stage: 'starting' };
  /** Contributions whose verdict is already known (at the start, or announced since). */
  private readonly announced = new Set<string>();
  private readonly attempts = new Map<string, number>();
  /** What this run computed, by circuit: the accepted hash must be the same. */
  private readonly localHashes = new Map<string, string>();
  private readonly accepted = new Map<string, AcceptedCircuit>();
  /** The last waiting line shown per circuit, so a log gets a line only when something changed. */
  private readonly shownWaiting = new Map<string, string>();
  private busySince: number | undefined;
  private mismatch = false;
  /** The presence advice is said once, the first time the run waits in line. */
  private presenceSaid = false;
  private turnFailuresInARow = 0;

  constructor(private readonly options: ContributorRunOptions) {}

  get activity(): RunActivity {
    return this.activityNow;
  }

  /** Every circuit accepted by the end of the run, with its index and hash. */
  get acceptedCircuits(): AcceptedCircuit[] {
    return this.options.circuits.flatMap((circuit) => this.accepted.get(circuit) ?? []);
  }

  /** Runs until every chosen circuit is accepted; throws RunFailure (or the abort) otherwise. */
  async run(): Promise<AcceptedCircuit[]> {
    const presence = new PresenceHold(this.options.client);
    try {
      return await this.runInLine();
    } finally {
      await presence.stop();
    }
  }

  private async runInLine(): Promise<AcceptedCircuit[]> {
    const { client, signal } = this.options;
    let me = await this.me();
    for (const contribution of me.contributions)
      if (contribution.status !== 'verifying') this.announced.add(contribution.id);
    this.noteAccepted(me, true);
    if (!this.allAccepted(me)) me = await this.join();
    let nowhere = 0;
    for (;;) {
      if (signal.aborted) throw signal.reason;
      this.announceVerdicts(me);
      this.noteLost(me);
      if (this.mismatch)
        throw new RunFailure(
          'contribution.invalid',
          'an accepted contribution hash differs from the one computed here; tell the coordinator',
        );
      this.noteAccepted(me, false);
      if (this.allAccepted(me)) {
        this.activityNow = { stage: 'done' };
        return this.acceptedCircuits;
      }
      this.checkStillIn(me);

      const turn = me.status.circuits.find((c) => c.state === 'turn');
      const verifying = me.status.circuits.find((c) => c.state === 'verifying');
      const waiting = me.status.circuits.find((c) => c.state === 'waiting');
      if (turn && !this.options.circuits.includes(turn.circuit)) {
        // Granted by an earlier join (the page, another run) on a circuit not asked for this time:
        // given up at once, so the next in line gets it, and joined again with this run's choice.
        this.options.ui.note(`${turn.circuit}: giving up your turn there (it is not among the circuits asked for)`);
        await client.request('POST', '/api/me/leave');
        me = await this.join();
        continue;
      }
      if (turn) {
        if (!(await this.takeTurn(turn.circuit))) await sleep(TURN_RETRY_PAUSE_MS, signal);
        me = await this.me();
        continue;
      }
      let pause: number;
      if (verifying) {
        this.activityNow = { stage: 'verifying', circuit: verifying.circuit };
        this.options.ui.progress({
          type: 'step',
          circuit: verifying.circuit,
          step: 'verifying: the coordinator is checking your contribution',
        });
        nowhere = 0;
        pause = VERDICT_POLL_MS;
        // Nothing else to wait for (a hold would hide a turn granted elsewhere meanwhile): the coordinator
        // holds the answer until the verdict is in; one that answers at once (older) is paced as before.
        if (!waiting) {
          const asked = Date.now();
          me = await this.me(VERDICT_WAIT_MS);
          if (me.status.circuits.some((c) => c.state === 'verifying'))
            await sleep(VERDICT_POLL_MS - (Date.now() - asked), signal);
          continue;
        }
      } else if (waiting && waiting.state === 'waiting') {
        this.activityNow = { stage: 'waiting' };
        this.showWaiting(me, waiting);
        pause = waitingPollMs(waiting.position);
        nowhere = 0;
      } else {
        // In no queue, turn or verification, with circuits left: a verdict queued us nowhere (a
        // leave undone too late, a choice changed meanwhile). Join once more; twice nowhere ends the run.
        if (++nowhere > 2)
          throw new RunFailure(
            'lobby.not_queued',
            'the coordinator keeps this contributor in no queue; run the command again',
          );
        me = await this.join();
        continue;
      }
      await sleep(pause, signal);
      me = await this.me();
    }
  }

  private allAccepted(me: MeView): boolean {
    return this.options.circuits.every(
      (circuit) => me.status.circuits.find((c) => c.circuit === circuit)?.state === 'accepted',
    );
  }

  /** Stops the run when the coordinator says it cannot go on: removed from the queue, or the ceremony closed. */
  private checkStillIn(me: MeView): void {
    const removed = me.status.removed;
    if (removed) {
      const why = removed.reason === 'missed_turns' ? 'after missed turns' : 'by the coordinator';
      throw new RunFailure(
        'lobby.not_queued',
        `your entry for ${removed.circuit} left the queue ${why}: ${removed.message}`,
      );
    }
    if (me.phase === 'closed' || me.phase === 'finalising' || me.phase === 'finalised') {
      const words = terminalWords(me.phase === 'finalised' ? 'ceremony.finalised' : 'ceremony.not_open');
      throw new RunFailure(
        me.phase === 'finalised' ? 'ceremony.finalised' : 'ceremony.not_open',
        `the ceremony is ${me.phase}: ${words.what}`,
      );
    }
  }

  private async join(): Promise<MeView> {
    const body = this.options.everyCircuit ? {} : { circuits: [...this.options.circuits] };
    return this.call(() => this.options.client.request<MeView>('POST', '/api/me/join', body));
  }

  /** GET /api/me; `verdictWaitMs`: the coordinator may hold it until a contribution's verdict is in. */
  private me(verdictWaitMs?: number): Promise<MeView> {
    const route = verdictWaitMs ? `/api/me?verdictWaitMs=${verdictWaitMs}` : '/api/me';
    return this.call(() => this.options.client.request<MeView>('GET', route));
  }

  /**
   * A call the run cannot do without: a busy coordinator (rate limits, a 5xx of its own) is asked
   * again with growing pauses (said once), an ended session is signed in again. A coordinator that
   * does not answer has been asked again by the client for RESTART_RIDE_OUT_MS already: that ends
   * the run. Anything else is thrown.
   */
  private async call<T>(request: () => Promise<T>): Promise<T> {
    let pause = 1000;
    for (;;) {
      try {
        const answer = await request();
        if (this.busySince !== undefined) this.options.ui.note('the coordinator answers again');
        this.busySince = undefined;
        return answer;
      } catch (error) {
        if (this.options.signal.aborted || !(error instanceof ApiError)) throw error;
        if (error.code === 'auth.required') {
          this.options.ui.note('the session ended; signing in again');
          await this.options.signInAgain();
          continue;
        }
        if (error.code === 'ceremony.not_open' || error.code === 'ceremony.finalised') {
          throw new RunFailure(error.code, `${terminalWords(error.code).what} (${error.message})`);
        }
        if (looksLikeRestart(error.status, error.code)) {
          throw new RunFailure(
            'network',
            `the coordinator did not answer for ${duration(RESTART_RIDE_OUT_MS)}: ${error.message}`,
          );
        }
        const transient =
          error.code === 'rate.limited' ||
          error.code === 'rate.ceremony_reads' ||
          error.code === 'lobby.too_many_joins' ||
          error.status >= 500;
        if (!transient) throw error;
        const now = Date.now();
        if (this.busySince === undefined) {
          this.busySince = now;
          this.options.ui.note(`the coordinator is busy (${error.message}); asking again`);
        } else if (now - this.busySince > BUSY_FOR_MS) {
          throw new RunFailure(
            'network',
            `the coordinator was busy for ${duration(now - this.busySince)}: ${error.message}`,
          );
        }
        await sleep(Math.max(pause, (error.retryAfterSeconds ?? 0) * 1000), this.options.signal);
        pause = Math.min(pause * 2, 30_000);
      }
    }
  }

  private showWaiting(me: MeView, waiting: Extract<CircuitProgress, { state: 'waiting' }>): void {
    if (!this.presenceSaid && me.status.presence) {
      this.presenceSaid = true;
      this.options.ui.note(presenceAdvice(me.status.presence, 'terminal'));
    }
    const serverNow = me.now;
    let where = `waiting: ${ordinal(waiting.position)} in line`;
    let when: string;
    if (waiting.eligibleAt && waiting.eligibleAt > serverNow)
      when = `after a missed turn, eligible again in ${duration(waiting.eligibleAt - serverNow)}`;
    else if (me.phase === 'paused' || me.phase === 'setup')
      when = `no turn starts until the coordinator ${me.phase === 'paused' ? 'reopens' : 'opens'} the ceremony`;
    else when = `your turn in about ${duration(waiting.etaMs)}`;
    if (waiting.position === 1) where = 'waiting: next in line';
    const line = `${where} · ${when}`;
    // A log gets a line when the position or the situation changes, not every ETA tick.
    const key = `${waiting.position}|${waiting.eligibleAt ?? ''}|${me.phase}`;
    if (!this.options.ui.live && this.shownWaiting.get(waiting.circuit) === key) return;
    this.shownWaiting.set(waiting.circuit, key);
    this.options.ui.progress({ type: 'step', circuit: waiting.circuit, step: line });
  }

  /** One stdout line per accepted chosen circuit: those accepted before this run, said once at its start. */
  private noteAccepted(me: MeView, beforeRun: boolean): void {
    for (const progress of me.status.circuits) {
      if (
        progress.state !== 'accepted' ||
        !this.options.circuits.includes(progress.circuit) ||
        this.accepted.has(progress.circuit)
      )
        continue;
      const entry = { circuit: progress.circuit, index: progress.index, contributionHash: progress.contributionHash };
      this.accepted.set(progress.circuit, entry);
      if (beforeRun) this.options.ui.note(`${progress.circuit}: already accepted (contribution #${progress.index})`);
      this.options.output(`${progress.circuit} #${progress.index} contribution hash ${progress.contributionHash}`);
    }
  }

  /**
   * An acceptance seen earlier in this run that the coordinator no longer has: it went back to an
   * earlier state (a backup restored), so that contribution is lost. Said once; the circuit is
   * contributed to again (its stdout line is printed again once accepted anew).
   */
  private noteLost(me: MeView): void {
    for (const [circuit, earlier] of this.accepted) {
      const now = me.status.circuits.find((c) => c.circuit === circuit);
      if (now?.state === 'accepted' && now.index === earlier.index && now.contributionHash === earlier.contributionHash)
        continue;
      this.accepted.delete(circuit);
      this.localHashes.delete(circuit);
      this.options.ui.note(
        `${circuit}: your contribution #${earlier.index} (hash ${earlier.contributionHash.slice(0, 16)}…) is no ` +
          'longer on the coordinator: it went back to an earlier state (a backup restored), so that contribution ' +
          `is lost; contributing to ${circuit} again`,
      );
    }
  }

  /** Says every verdict that arrived since the last poll, in plain words; counts refusals. */
  private announceVerdicts(me: MeView): void {
    const fresh = me.contributions
      .filter((c) => c.status !== 'verifying' && !this.announced.has(c.id))
      .sort((a, b) => a.createdAt - b.createdAt);
    for (const contribution of fresh) {
      this.announced.add(contribution.id);
      this.announceVerdict(contribution);
    }
  }

  private announceVerdict(contribution: ContributionView): void {
    const { circuit } = contribution;
    const { ui } = this.options;
    if (contribution.status === 'accepted') {
      const local = this.localHashes.get(circuit);
      const matches =
        local === undefined ? '' : local === contribution.contributionHash ? '; it matches the hash computed here' : '';
      ui.note(`${circuit}: accepted as contribution #${contribution.index}${matches}`);
      if (local !== undefined && local !== contribution.contributionHash) {
        ui.note(
          `${circuit}: the accepted hash ${contribution.contributionHash} is NOT ` +
            `the one computed here (${local}): tell the coordinator`,
        );
        this.mismatch = true;
      }
      ui.progress({ type: 'finished', circuit });
      return;
    }
    const code = contribution.code ?? 'contribution.invalid';
    const words = terminalWords(code, contribution.message);
    const counted = contribution.status !== 'discarded';
    const attempts = (this.attempts.get(circuit) ?? 0) + (counted ? 1 : 0);
    this.attempts.set(circuit, attempts);
    ui.note(`${circuit}: ${contribution.status === 'discarded' ? 'not added' : 'refused'} [${code}]: ${words.what}`);
    if (contribution.message) ui.note(`  the coordinator says: ${contribution.message}`);
    if (counted && attempts >= this.options.maxAttempts) {
      throw new RunFailure(
        code,
        `${circuit} was refused ${attempts} time${attempts === 1 ? '' : 's'} ` +
          `(the limit, --max-attempts); leaving the queue`,
        true,
      );
    }
    ui.note(`  what happens next: ${words.next}`);
  }

  /** One turn: heartbeats around the protocol's download → contribute → upload. False: no upload was made. */
  private async takeTurn(circuit: string): Promise<boolean> {
    const { client, ui, signal } = this.options;
    this.activityNow = { stage: 'turn', circuit };
    await this.options.ready;
    const turn = new AbortController();
    const stopTurn = (): void => turn.abort(signal.reason);
    signal.addEventListener('abort', stopTurn, { once: true });
    let beats: NodeJS.Timeout | undefined;
    let everyMs = HEARTBEAT_EVERY_MS;
    let turnOver = false;
    const heartbeat = async (): Promise<void> => {
      try {
        const answer = await client.request<TurnHeartbeat>(
          'POST',
          `/api/circuits/${encodeURIComponent(circuit)}/heartbeat`,
        );
        // Older coordinators answer the deadline only.
        if (Number.isFinite(answer.heartbeatEveryMs) && answer.heartbeatEveryMs > 0) everyMs = answer.heartbeatEveryMs;
      } catch (error) {
        // The turn is gone (deadline passed, the coordinator took it): stop working on it. Unless
        // the upload has just completed (the turn is the contribution being verified now), which
        // the coordinator can see before this client does.
        if (
          error instanceof ApiError &&
          (error.code === 'lobby.not_your_turn' || error.code === 'lobby.already_contributed') &&
          !(await this.uploaded(circuit))
        ) {
          turn.abort(error);
        }
        // Anything else (a dropped connection): the next beat tries again.
      }
      if (!turnOver && !turn.signal.aborted) beats = setTimeout(() => void heartbeat(), everyMs);
    };
    void heartbeat();
    try {
      const ceremony = await this.call(() => client.request<CeremonyView>('GET', '/api/ceremony'));
      const head = ceremony.circuits.find((c) => c.name === circuit);
      if (!head) throw new RunFailure('circuit.unknown', `the coordinator no longer lists ${circuit}`);
      let result: TurnResult;
      try {
        result = await this.options.protocol.takeTurn({
          circuit,
          headIndex: head.headIndex,
          headFileHash: head.headHash,
          name: this.options.name,
          entropy: this.options.entropy,
          signal: turn.signal,
          progress: (event) => ui.progress(event),
          onHash: (hash) => this.localHashes.set(circuit, hash),
        });
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        const reason = turn.signal.aborted ? turn.signal.reason : error;
        if (!(reason instanceof ApiError)) throw reason;
        if (await this.uploadedDespite(circuit, reason)) return true;
        this.turnFailed(circuit, reason);
        return false;
      }
      this.turnFailuresInARow = 0;
      this.localHashes.set(circuit, result.contributionHash);
      const resumed =
        result.resumedFrom > 0 ? ` (resumed at byte ${result.resumedFrom} after a dropped connection)` : '';
      const { downloadMs, computeMs, uploadMs } = result.timings;
      const took = `download ${seconds(downloadMs)}, contribution ${seconds(computeMs)}, upload ${seconds(uploadMs)}`;
      ui.note(`${circuit}: uploaded${resumed} (${took}); your contribution hash is ${result.contributionHash}`);
      this.activityNow = { stage: 'verifying', circuit };
      return true;
    } finally {
      turnOver = true;
      clearTimeout(beats);
      signal.removeEventListener('abort', stopTurn);
    }
  }

  /** Whether the coordinator holds this run's upload for `circuit` (being verified, or accepted). */
  private async uploaded(circuit: string): Promise<boolean> {
    try {
      const me = await this.options.client.request<MeView>('GET', '/api/me');
      const state = me.status.circuits.find((c) => c.circuit === circuit)?.state;
      return state === 'verifying' || state === 'accepted';
    } catch {
      return false;
    }
  }

  /**
   * A turn that seemed to end without an upload, while the coordinator holds this run's upload: the
   * last PATCH's answer was lost to a restart (the upload it completed then gone from tus, so tus
   * asked to create another, which the coordinator refuses). Said as what it is; the verdict follows.
   */
  private async uploadedDespite(circuit: string, error: ApiError): Promise<boolean> {
    if (error.code !== 'lobby.not_your_turn' && error.code !== 'lobby.already_contributed') return false;
    if (!(await this.uploaded(circuit))) return false;
    this.options.ui.note(`${circuit}: uploaded (the coordinator had the whole upload; its last answer was lost)`);
    this.activityNow = { stage: 'verifying', circuit };
    return true;
  }

  /** A turn that ended without an upload: said in plain words; the run goes on from the lobby's state. */
  private turnFailed(circuit: string, error: ApiError): void {
    const { ui } = this.options;
    const words = terminalWords(error.code, error.message);
    if (error.code === 'lobby.not_your_turn' || error.code === 'lobby.already_contributed') {
      ui.note(`${circuit}: the turn ended before the upload [${error.code}]: ${words.what}`);
      return;
    }
    if (error.code === 'network' || error.status >= 500) {
      if (++this.turnFailuresInARow >= TURN_FAILURES_IN_A_ROW) {
        throw new RunFailure(
          'network',
          `${circuit}: the turn broke off ${this.turnFailuresInARow} times in a ` +
            `row (${error.message}); leaving the queue`,
          true,
        );
      }
      ui.note(`${circuit}: the turn was interrupted (${error.message}); trying again while the turn lasts`);
      return;
    }
    // A refusal of the upload itself (too large, too small, …): it counts as an attempt.
    const attempts = (this.attempts.get(circuit) ?? 0) + 1;
    this.attempts.set(circuit, attempts);
    ui.note(`${circuit}: the upload was refused [${error.code}]: ${words.what}`);
    if (attempts >= this.options.maxAttempts)
      throw new RunFailure(
        error.code,
        `${circuit} was refused ${attempts} times (the limit, --max-attempts); leaving the queue`,
        true,
      );
    ui.note(`  what happens next: ${words.next}`);
  }
}
