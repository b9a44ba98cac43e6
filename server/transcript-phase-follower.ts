/**
 * Keeps a serving coordinator's phase in line with the transcript, which commands run on the data
 * folder can change under it: `ceremony announce-beacon` (contributions closed for good) or
 * `ceremony finalise`. Without it the lobby would go on granting turns whose contributions every
 * commit refuses (ceremony.beacon_announced, ceremony.finalised): a contributor's whole turn, up to
 * an hour of a laptop's work on a 2^18 key, spent for nothing, and again for each next in line.
 *
 * Once a second, it reads the ceremony's state (a stat of two files while nothing changed,
 * server/ceremony-state-reader.ts) and applies followTranscriptPhase. When that closes or
 * finalises the phase, the turns not yet uploaded end at once, each contributor told why; those
 * already uploaded are refused by their commit, as they would be after a restart.
 */
import type { CeremonyState } from '../core/ceremony/open-ceremony.ts';
import type { CeremonyPhaseStore } from './ceremony-phase.ts';
import type { Clock } from './clock.ts';
import type { Lobby } from './lobby/lobby.ts';
import type { ServiceLog } from './ceremony-service.ts';
import { followTranscriptPhase, type PhaseReconciliation } from './startup/reconcile-phase.ts';

export interface TranscriptPhaseFollowerDeps {
  phase: CeremonyPhaseStore;
  lobby: Lobby;
  clock: Clock;
  log: ServiceLog;
  /** The ceremony on disk, re-read only when it changed (CeremonyService.ceremonyState). */
  ceremonyState(): Promise<CeremonyState>;
  /** Called after a change, so freed circuits and waiting pages see it now (CeremonyService.tick). */
  changed(): void;
  intervalMs?: number;
}

const ENDED_TURN_MESSAGE: Record<Exclude<PhaseReconciliation, 'in_line' | 'finalisation_interrupted'>, string> = {
  closed_by_beacon_announcement:
    'the beacon was announced, so contributions are closed for good: your turn ended before you spent more time on it',
  finalised_from_transcript: 'the ceremony was finalised: your turn ended before you spent more time on it',
};

export class TranscriptPhaseFollower {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<PhaseReconciliation> | undefined;
  /** The last read's failure, logged once until it changes (a corrupt transcript stays corrupt). */
  private lastFailure: string | undefined;

  constructor(private readonly deps: TranscriptPhaseFollowerDeps) {}

  start(): void {
    this.timer = setInterval(() => void this.check(), this.deps.intervalMs ?? 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Reads the transcript once and applies what it says; a check already running is joined, not doubled. */
  check(): Promise<PhaseReconciliation> {
    this.running ??= this.followOnce().finally(() => (this.running = undefined));
    return this.running;
  }

  private async followOnce(): Promise<PhaseReconciliation> {
    const { phase, lobby, clock, log } = this.deps;
    let state: CeremonyState;
    try {
      state = await this.deps.ceremonyState();
      this.lastFailure = undefined;
    } catch (error) {
      const failure = String(error);
      if (failure !== this.lastFailure) log.warn('could not read the transcript to follow it', { error: failure });
      this.lastFailure = failure;
      return 'in_line';
    }
    const found = followTranscriptPhase(phase, {
      finalisedInTranscript: state.finalised !== undefined,
      beaconAnnouncedInTranscript: state.beaconAnnouncement !== undefined,
      now: clock.now(),
    });
    if (found === 'in_line' || found === 'finalisation_interrupted') return found;
    const ended = lobby.activeTurns().filter((turn) => turn.state === 'turn');
    for (const turn of ended) lobby.removeEntry(turn.contributorId, ENDED_TURN_MESSAGE[found]);
    log.warn(
      found === 'closed_by_beacon_announcement'
        ? 'the transcript now announces the beacon, so contributions are closed: the ceremony is closed'
        : 'the transcript is now finalised (by `ceremony finalise` on the data folder): the ceremony is finalised',
      { phase: phase.get(), endedTurns: ended.map((turn) => turn.circuit) },
    );
    this.deps.changed();
    return found;
  }
}
