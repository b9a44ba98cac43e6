/**
 * The phase table with `finalising` in it: the coordinator's moves, the finalisation's own moves,
 * every change refused while finalising (ceremony.locked), what a start after an interrupted
 * finalisation does, and a database of the previous schema opening with its phase kept. The store
 * accepts exactly the moves of the one table (core/ceremony/ceremony-phases.ts) the console offers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isCoordinatorError, type ErrorCode } from '../../core/errors.ts';
import { CeremonyPhaseStore } from '../../server/ceremony-phase.ts';
import { phaseStoreIn } from '../helpers/phase-store-in.ts';
import {
  COORDINATOR_PHASES,
  coordinatorMovesFrom,
  PHASE_MOVES,
  type CeremonyPhase,
} from '../../core/ceremony/ceremony-phases.ts';
import { applyMigrations, openDatabase } from '../../server/store/database.ts';

function refusedWith(code: ErrorCode, message?: RegExp): (error: unknown) => boolean {
  return (error) => isCoordinatorError(error, code) && (message === undefined || message.test(error.message));
}

test('a finalisation runs closed → finalising → finalised; nothing else changes the phase meanwhile', () => {
  const phase = new CeremonyPhaseStore(openDatabase(':memory:'));
  assert.equal(phase.get(), 'setup');
  assert.throws(
    () => phase.beginFinalising(1),
    refusedWith('ceremony.not_closed'),
    'only a closed ceremony is finalised',
  );
  phase.set('open', 1);
  phase.set('closed', 2);
  phase.beginFinalising(3);
  assert.equal(phase.get(), 'finalising');
  for (const next of ['open', 'paused', 'closed'] as const) {
    assert.throws(
      () => phase.set(next, 4),
      refusedWith('ceremony.locked', /finalisation is running/),
      `finalising → ${next}`,
    );
  }
  assert.throws(() => phase.beginFinalising(4), refusedWith('ceremony.locked', /already running/));
  assert.equal(phase.get(), 'finalising');
  phase.endFinalising('finalised', 5);
  assert.equal(phase.get(), 'finalised');
  assert.throws(() => phase.set('open', 6), refusedWith('ceremony.invalid_phase_change'));
});

test('a failed finalisation goes back to closed and may be run again', () => {
  const phase = new CeremonyPhaseStore(openDatabase(':memory:'));
  phase.set('closed', 1);
  phase.beginFinalising(2);
  phase.endFinalising('failed', 3);
  assert.equal(phase.get(), 'closed');
  assert.equal(phase.finalisationInterruptedAt(), undefined, 'a failure in-process is not an interruption');
  phase.beginFinalising(4);
  assert.equal(phase.get(), 'finalising');
});

test('a start that finds finalising goes back to closed and remembers when, until finalised', () => {
  const db = openDatabase(':memory:');
  const before = new CeremonyPhaseStore(db);
  before.set('closed', 1);
  assert.equal(before.recoverInterruptedFinalisation(2), false, 'nothing to recover when closed');
  before.beginFinalising(3);

  // The process stopped here; a new store on the same database is the next start.
  const after = new CeremonyPhaseStore(db);
  assert.equal(after.get(), 'finalising');
  assert.equal(after.recoverInterruptedFinalisation(10), true);
  assert.equal(after.get(), 'closed');
  assert.equal(after.finalisationInterruptedAt(), 10);
  after.beginFinalising(11);
  after.endFinalising('finalised', 12);
  assert.equal(after.finalisationInterruptedAt(), undefined);
});

test('a database of the previous phase schema opens, keeping its phase', () => {
  const db = openDatabase(':memory:');
  applyMigrations(db, 'phase', [
    `CREATE TABLE ceremony_phase (id INTEGER PRIMARY KEY CHECK (id = 1), phase TEXT NOT NULL,
       updated_at INTEGER NOT NULL);
     INSERT INTO ceremony_phase (id, phase, updated_at) VALUES (1, 'setup', 0);`,
  ]);
  db.prepare("UPDATE ceremony_phase SET phase = 'closed' WHERE id = 1").run();
  const phase = new CeremonyPhaseStore(db);
  assert.equal(phase.get(), 'closed');
  assert.equal(phase.finalisationInterruptedAt(), undefined);
  phase.beginFinalising(1);
  assert.equal(phase.get(), 'finalising');
});

test("a coordinator's phase change is accepted exactly when the shared table offers it", () => {
  for (const from of Object.keys(PHASE_MOVES) as CeremonyPhase[]) {
    for (const to of COORDINATOR_PHASES) {
      if (to === from) continue;
      const store = phaseStoreIn(from);
      const offered = coordinatorMovesFrom(from).includes(to);
      if (offered) assert.equal(store.set(to, 2), to, `${from} → ${to}`);
      else
        assert.throws(
          () => store.set(to, 2),
          refusedWith(from === 'finalising' ? 'ceremony.locked' : 'ceremony.invalid_phase_change'),
          `${from} → ${to}`,
        );
    }
  }
});
