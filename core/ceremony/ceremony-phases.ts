/**
 * The ceremony's phases and the moves between them: one table, shared by the coordinator
 * (server/ceremony-phase.ts persists the phase and refuses any move the table lacks) and the
 * console page (which offers only the moves the table allows). No imports, so it runs in a
 * browser as it does in Node.
 *
 * `setup` (not yet opened), `open` (turns are granted), `paused` (queues kept, no new turns),
 * `closed` (no more contributions; ready to finalise, or to reopen), `finalising` (the beacon and
 * final keys are being made), `finalised`. Coordinators move between setup, open, paused and
 * closed; only the finalisation moves into and out of `finalising`, and while it runs nothing else
 * changes the phase.
 */

export const PHASES = ['setup', 'open', 'paused', 'closed', 'finalising', 'finalised'] as const;
export type CeremonyPhase = (typeof PHASES)[number];

/** Every move the ceremony may make, from each phase. */
export const PHASE_MOVES: Readonly<Record<CeremonyPhase, readonly CeremonyPhase[]>> = {
  setup: ['open', 'closed'],
  open: ['paused', 'closed'],
  paused: ['open', 'closed'],
  closed: ['open', 'finalising'],
  // Back to closed when a finalisation fails or was interrupted by a restart.
  finalising: ['finalised', 'closed'],
  finalised: [],
};

/** The phases a coordinator sets by hand; the others belong to the finalisation. */
export const COORDINATOR_PHASES = ['open', 'paused', 'closed'] as const;
export type CoordinatorPhase = (typeof COORDINATOR_PHASES)[number];

function isCoordinatorPhase(phase: CeremonyPhase): phase is CoordinatorPhase {
  return (COORDINATOR_PHASES as readonly CeremonyPhase[]).includes(phase);
}

/** The phases a coordinator may set from `current`: none while a finalisation runs. */
export function coordinatorMovesFrom(current: CeremonyPhase): CoordinatorPhase[] {
  return current === 'finalising' ? [] : PHASE_MOVES[current].filter(isCoordinatorPhase);
}
