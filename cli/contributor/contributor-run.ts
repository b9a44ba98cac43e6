/**
 * A terminal contributor's whole run against a coordinator, after sign-in: the protocol's state
 * machine is the page's too (client/contributor-driver.ts: join, waiting, turn, verifying,
 * accepted, and back in the queue after a refusal); this is the terminal's side of it. Turns move
 * the bytes through files (the TurnProtocol); every verdict that arrives during the run is said in
 * plain words (the page's table, core/error-messages.ts); an acceptance the coordinator no longer
 * has (it went back to an earlier state: a backup restored after a lost disk) is said too, and that
 * circuit is taken again; each accepted circuit gets one line on stdout
 * (`CIRCUIT #INDEX contribution hash HASH`, as `ceremony contribute` prints locally). The run ends
 * when every chosen circuit is accepted, or with a failure: too many refusals of one circuit, the
 * entry removed, the ceremony closed, the coordinator out of reach for too long.
 */
import { terminalWords } from '../../core/error-messages.ts';
import { presenceAdvice } from '../../core/queue-log/presence-words.ts';
import type { CircuitProgress, ContributionView, MeView } from '../../core/coordinator-api/api-types.ts';
import { type ApiError } from '../../client/api-client.ts';
import { fetchedPresence, PresenceHolder, terminalReopenPauseMs } from '../../client/presence-holder.ts';
import { ContributorDriver } from '../../client/contributor-driver.ts';
import {
  coordinatorApi,
  RunFailure,
  type DriverTurn,
  type TurnFailure,
} from '../../client/contributor-driver-parts.ts';
import { duration, ordinal, seconds, standbyStarting, standbyTakenElsewhere } from '../../client/run-words.ts';
import type { AcceptedCircuit, ContributorRunOptions, RunActivity } from './contributor-run-options.ts';

/** A turn that broke off (a dropped download, a damaged one) is taken again after this pause… */
const TURN_RETRY_PAUSE_MS = 2000;
/** …at most this many times in a row. */
const TURN_FAILURES_IN_A_ROW = 5;

/** The terminal's side of the protocol (client/contributor-driver.ts): its lines, its stdout, its end. */
export class ContributorRun {
  private activityNow: RunActivity = { stage: 'starting' };
  private readonly accepted = new Map<string, AcceptedCircuit>();
  /** The last waiting line shown per circuit, so a log gets a line only when something changed. */
  private readonly shownWaiting = new Map<string, string>();
  private mismatch = false;
  /** The presence advice is said once, the first time the run waits in line. */
  private presenceSaid = false;
  private answers = 0;
  private readonly driver: ContributorDriver;

  constructor(private readonly options: ContributorRunOptions) {
    const { client, ui } = options;
    this.driver = new ContributorDriver({
      api: coordinatorApi(client),
      turn: (turn) => this.takeTurn(turn),
      presence: new PresenceHolder({ connect: fetchedPresence(client), reopenPauseMs: terminalReopenPauseMs }),
      holdPresence: 'run',
      joinAtStart: { circuits: options.circuits, everyCircuit: options.everyCircuit },
      steady: { signInAgain: options.signInAgain },
      pollDuringTurns: false,
      holdPollsForVerdicts: true,
      confirmLostTurns: true,
      turnRetryPauseMs: TURN_RETRY_PAUSE_MS,
      ready: options.ready,
      view: {
        answered: (me) => this.answered(me),
        verdict: (contribution, attempts) => this.announceVerdict(contribution, attempts),
        turnStarting: (circuit, standby) => {
          this.activityNow = { stage: 'turn', circuit };
          if (standby) ui.note(standbyStarting(circuit));
        },
        standbyTakenElsewhere: (circuit) => ui.note(standbyTakenElsewhere(circuit)),
        uploaded: (circuit, answerLost) => {
          if (answerLost)
            ui.note(`${circuit}: uploaded (the coordinator had the whole upload; its last answer was lost)`);
          this.activityNow = { stage: 'verifying', circuit };
        },
        turnFailed: (circuit, error, failure) => this.turnFailed(circuit, error, failure),
        note: (line) => ui.note(line),
      },
    });
  }

  get activity(): RunActivity {
    return this.activityNow;
  }

  /** Every circuit accepted by the end of the run, with its index and hash. */
  get acceptedCircuits(): AcceptedCircuit[] {
    return this.options.circuits.flatMap((circuit) => this.accepted.get(circuit) ?? []);
  }

  /** Runs until every chosen circuit is accepted; throws RunFailure (or the abort) otherwise. */
  async run(): Promise<AcceptedCircuit[]> {
    const { signal } = this.options;
    if (signal.aborted) throw signal.reason;
    const stop = (): void => this.driver.stop(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    try {
      await this.driver.run();
    } finally {
      signal.removeEventListener('abort', stop);
    }
    this.activityNow = { stage: 'done' };
    return this.acceptedCircuits;
  }

  /** Each answer: lost and new acceptances said, the end of the line checked, where the run waits shown. */
  private answered(me: MeView): void {
    this.noteLost(me);
    if (this.mismatch)
      throw new RunFailure(
        'contribution.invalid',
        'an accepted contribution hash differs from the one computed here; tell the coordinator',
      );
    this.noteAccepted(me, this.answers++ === 0);
    if (this.allAccepted(me)) return;
    this.checkStillIn(me);
    const circuits = me.status.circuits;
    if (circuits.some((c) => c.state === 'turn')) return;
    const verifying = circuits.find((c) => c.state === 'verifying');
    const waiting = circuits.find((c) => c.state === 'waiting');
    if (verifying) {
      this.activityNow = { stage: 'verifying', circuit: verifying.circuit };
      this.options.ui.progress({
        type: 'step',
        circuit: verifying.circuit,
        step: 'verifying: the coordinator is checking your contribution',
      });
    } else if (waiting && waiting.state === 'waiting') {
      this.activityNow = { stage: 'waiting' };
      this.showWaiting(me, waiting);
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
      this.driver.forgetHash(circuit);
      this.options.ui.note(
        `${circuit}: your contribution #${earlier.index} (hash ${earlier.contributionHash.slice(0, 16)}…) is no ` +
          'longer on the coordinator: it went back to an earlier state (a backup restored), so that contribution ' +
          `is lost; contributing to ${circuit} again`,
      );
    }
  }

  private announceVerdict(contribution: ContributionView, attempts: number): void {
    const { circuit } = contribution;
    const { ui } = this.options;
    if (contribution.status === 'accepted') {
      const local = this.driver.localHash(circuit);
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

  /** One turn: the protocol's download → contribute → upload; its upload said with the hash and timings. */
  private async takeTurn(turn: DriverTurn): Promise<void> {
    const { circuit } = turn;
    const result = await this.options.protocol.takeTurn({
      circuit,
      headIndex: turn.headIndex,
      headFileHash: turn.headFileHash,
      name: this.options.name,
      entropy: this.options.entropy,
      signal: turn.signal,
      progress: (event) => this.options.ui.progress(event),
      onHash: turn.onHash,
      standby: turn.standby,
      taken: turn.taken,
    });
    this.driver.rememberHash(circuit, result.contributionHash);
    const resumed = result.resumedFrom > 0 ? ` (resumed at byte ${result.resumedFrom} after a dropped connection)` : '';
    const { downloadMs, computeMs, uploadMs } = result.timings;
    const took = `download ${seconds(downloadMs)}, contribution ${seconds(computeMs)}, upload ${seconds(uploadMs)}`;
    this.options.ui.note(
      `${circuit}: uploaded${resumed} (${took}); your contribution hash is ${result.contributionHash}`,
    );
  }

  /** A turn that ended without an upload: said in plain words; the run goes on from the lobby's state. */
  private turnFailed(circuit: string, error: ApiError, failure: TurnFailure): void {
    const { ui } = this.options;
    const words = terminalWords(error.code, error.message);
    if (failure.kind === 'lost') {
      ui.note(`${circuit}: the turn ended before the upload [${error.code}]: ${words.what}`);
      return;
    }
    if (failure.kind === 'interrupted') {
      if (failure.inARow >= TURN_FAILURES_IN_A_ROW) {
        throw new RunFailure(
          'network',
          `${circuit}: the turn broke off ${failure.inARow} times in a row (${error.message}); leaving the queue`,
          true,
        );
      }
      ui.note(`${circuit}: the turn was interrupted (${error.message}); trying again while the turn lasts`);
      return;
    }
    // A refusal of the upload itself (too large, too small, …): it counts as an attempt.
    ui.note(`${circuit}: the upload was refused [${error.code}]: ${words.what}`);
    if (failure.attempts >= this.options.maxAttempts)
      throw new RunFailure(
        error.code,
        `${circuit} was refused ${failure.attempts} times (the limit, --max-attempts); leaving the queue`,
        true,
      );
    ui.note(`  what happens next: ${words.next}`);
  }
}
