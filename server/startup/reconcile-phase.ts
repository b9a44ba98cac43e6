/**
 * The start-up policy for the ceremony's phase, run before anything is served: SQLite's phase is
 * brought in line with the transcript, the commit point of the ceremony, which wins where they
 * disagree.
 *
 *  - The transcript holds its `finalised` entry but the phase is not `finalised`: finalisation
 *    completed on disk and the coordinator stopped before recording it, or the ceremony was
 *    finalised offline with `ceremony finalise`. The phase goes to `finalised` through the table's
 *    own moves (to closed, then finalising, then finalised).
 *  - Otherwise a phase left `finalising` was interrupted by the stop: back to `closed`, the time
 *    remembered for the console (CeremonyPhaseStore.recoverInterruptedFinalisation).
 *  - The transcript announces the beacon (`ceremony announce-beacon` run on the data folder while
 *    the coordinator was stopped) but the phase would grant turns (setup, open, paused): it goes to
 *    `closed`, as every contribution would now be refused.
 *  - Then, when the operator asked for it (OPEN_ON_START), a ceremony still in `setup` opens.
 *
 * The first and third rules hold while the coordinator serves too (followTranscriptPhase, run by
 * server/transcript-phase-follower.ts): the commands that change them work on the data folder.
 */
import type { CeremonyPhaseStore } from '../ceremony-phase.ts';

/** What the reconciliation found: the two already agreed, or which repair it made. */
export type PhaseReconciliation =
  'in_line' | 'finalised_from_transcript' | 'finalisation_interrupted' | 'closed_by_beacon_announcement';

export interface StartUpPhaseFacts {
  /** Whether the transcript holds its `finalised` entry (CeremonyState.finalised). */
  finalisedInTranscript: boolean;
  /** Whether the transcript announces the beacon (CeremonyState.beaconAnnouncement): contributions are closed. */
  beaconAnnouncedInTranscript?: boolean;
  /** The operator's OPEN_ON_START (ServerConfig.openOnStart). */
  openOnStart: boolean;
  now: number;
}

export function reconcilePhaseWithTranscript(
  phase: CeremonyPhaseStore,
  { finalisedInTranscript, beaconAnnouncedInTranscript = false, openOnStart, now }: StartUpPhaseFacts,
): PhaseReconciliation {
  let found: PhaseReconciliation = 'in_line';
  // At start-up nothing is finalising: a `finalising` phase is the stop's, done or not on disk.
  if (finalisedInTranscript && phase.get() === 'finalising') {
    phase.endFinalising('finalised', now);
    found = 'finalised_from_transcript';
  } else if (!finalisedInTranscript && phase.recoverInterruptedFinalisation(now)) {
    found = 'finalisation_interrupted';
  }
  const followed = followTranscriptPhase(phase, { finalisedInTranscript, beaconAnnouncedInTranscript, now });
  if (followed !== 'in_line') found = followed;
  if (openOnStart && phase.get() === 'setup') phase.set('open', now);
  return found;
}

/**
 * The part of the policy that also holds while the coordinator serves (TranscriptPhaseFollower):
 * a transcript that is finalised, or announces the beacon, while the phase would still grant turns.
 * A `finalising` phase is left alone: the coordinator's own finalisation is under way, and it
 * ends the phase itself.
 */
export function followTranscriptPhase(
  phase: CeremonyPhaseStore,
  { finalisedInTranscript, beaconAnnouncedInTranscript = false, now }: Omit<StartUpPhaseFacts, 'openOnStart'>,
): PhaseReconciliation {
  const current = phase.get();
  if (current === 'finalising' || current === 'finalised') return 'in_line';
  if (finalisedInTranscript) {
    if (current !== 'closed') phase.set('closed', now);
    phase.beginFinalising(now);
    phase.endFinalising('finalised', now);
    return 'finalised_from_transcript';
  }
  if (beaconAnnouncedInTranscript && current !== 'closed') {
    phase.set('closed', now);
    return 'closed_by_beacon_announcement';
  }
  return 'in_line';
}
