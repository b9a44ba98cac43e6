/** A ceremony phase store on a fresh in-memory database, brought to a phase through the table's own moves. */
import assert from 'node:assert/strict';
import type { CeremonyPhase } from '../../core/ceremony/ceremony-phases.ts';
import { CeremonyPhaseStore } from '../../server/ceremony-phase.ts';
import { openDatabase } from '../../server/store/database.ts';

const ROUTES: Record<CeremonyPhase, Array<(store: CeremonyPhaseStore) => void>> = {
  setup: [],
  open: [(s) => s.set('open', 1)],
  paused: [(s) => s.set('open', 1), (s) => s.set('paused', 1)],
  closed: [(s) => s.set('closed', 1)],
  finalising: [(s) => s.set('closed', 1), (s) => s.beginFinalising(1)],
  finalised: [(s) => s.set('closed', 1), (s) => s.beginFinalising(1), (s) => s.endFinalising('finalised', 1)],
};

export function phaseStoreIn(phase: CeremonyPhase): CeremonyPhaseStore {
  const store = new CeremonyPhaseStore(openDatabase(':memory:'));
  for (const step of ROUTES[phase]) step(store);
  assert.equal(store.get(), phase);
  return store;
}
