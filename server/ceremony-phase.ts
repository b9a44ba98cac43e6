/**
 * The ceremony's phase as the coordinator runs it, persisted in SQLite like every other state. The
 * phases and the moves between them are one table, core/ceremony/ceremony-phases.ts, which the
 * console page reads too; this store refuses every move the table lacks.
 *
 * Coordinators move between setup, open, paused and closed (set). Only the finalisation moves
 * into and out of `finalising` (beginFinalising, endFinalising), and nothing else changes the phase
 * while it runs. A coordinator that stops during finalisation finds `finalising` on its next start
 * with nothing running; recoverInterruptedFinalisation sends it back to `closed` and remembers
 * when, so the coordinator can finalise again (finalisation resumes: each circuit already sealed
 * in the transcript is not redone, and every file it writes is written temp-then-rename).
 */
import { applyMigrations, type Db } from './store/database.ts';
import { CoordinatorError } from '../core/errors.ts';
import { PHASE_MOVES, type CeremonyPhase, type CoordinatorPhase } from '../core/ceremony/ceremony-phases.ts';

const MIGRATIONS = [
  `CREATE TABLE ceremony_phase (id INTEGER PRIMARY KEY CHECK (id = 1), phase TEXT NOT NULL,
     updated_at INTEGER NOT NULL);
   INSERT INTO ceremony_phase (id, phase, updated_at) VALUES (1, 'setup', 0);`,
  // When a finalisation was last found interrupted by a restart (null: never, or finalised since).
  `ALTER TABLE ceremony_phase ADD COLUMN finalisation_interrupted_at INTEGER;`,
];

export class CeremonyPhaseStore {
  /** Prepared once: get() runs on every lobby tick and every request that checks the phase. */
  private readonly statements: PhaseStatements;

  constructor(private readonly db: Db) {
    applyMigrations(db, 'phase', MIGRATIONS);
    this.statements = prepareStatements(db);
  }

  get(): CeremonyPhase {
    return this.row().phase;
  }

  /** When a restart last found a finalisation interrupted, until the ceremony is finalised. */
  finalisationInterruptedAt(): number | undefined {
    return this.row().finalisation_interrupted_at ?? undefined;
  }

  private row(): { phase: CeremonyPhase; finalisation_interrupted_at: number | null } {
    // The first migration inserts the one row (id = 1), and nothing ever deletes it.
    return this.statements.select.get()!;
  }

  /** A coordinator's change between setup, open, paused and closed. Refused while finalising. */
  set(next: CoordinatorPhase, at: number): CeremonyPhase {
    return this.db
      .transaction(() => {
        const current = this.get();
        if (current === 'finalising')
          throw new CoordinatorError(
            'ceremony.locked',
            'finalisation is running; the phase cannot change until it ends',
          );
        if (current === next) return current;
        return this.move(current, next, at);
      })
      .immediate();
  }

  /**
   * closed → finalising, atomically, so two finalise requests cannot both begin. Refused with
   * ceremony.locked when a finalisation is already running.
   */
  beginFinalising(at: number): void {
    this.db
      .transaction(() => {
        this.requireFinalisable();
        this.move('closed', 'finalising', at);
      })
      .immediate();
  }

  /** Throws unless a finalisation may begin: the ceremony is closed and none is running. */
  requireFinalisable(): void {
    const current = this.get();
    if (current === 'finalising') throw new CoordinatorError('ceremony.locked', 'finalisation is already running');
    if (current === 'finalised') throw new CoordinatorError('ceremony.finalised', 'the ceremony is already finalised');
    if (current !== 'closed')
      throw new CoordinatorError('ceremony.not_closed', 'close the ceremony before finalising it');
  }

  /** finalising → finalised when it succeeded, back to closed when it failed (it may be run again). */
  endFinalising(result: 'finalised' | 'failed', at: number): void {
    this.db
      .transaction(() => {
        this.move(this.get(), result === 'finalised' ? 'finalised' : 'closed', at);
        if (result === 'finalised') this.statements.setInterrupted.run(null);
      })
      .immediate();
  }

  /**
   * At start-up, before anything runs: a phase left `finalising` was interrupted (the process
   * stopped mid-finalisation). It goes back to `closed`, and the time is kept for the console.
   * Returns whether it was.
   */
  recoverInterruptedFinalisation(at: number): boolean {
    return this.db
      .transaction(() => {
        if (this.get() !== 'finalising') return false;
        this.move('finalising', 'closed', at);
        this.statements.setInterrupted.run(at);
        return true;
      })
      .immediate();
  }

  private move(current: CeremonyPhase, next: CeremonyPhase, at: number): CeremonyPhase {
    if (!PHASE_MOVES[current].includes(next)) {
      throw new CoordinatorError('ceremony.invalid_phase_change', `the ceremony cannot go from ${current} to ${next}`);
    }
    this.statements.update.run(next, at);
    return next;
  }
}

type PhaseStatements = ReturnType<typeof prepareStatements>;

function prepareStatements(db: Db) {
  return {
    select: db.prepare<[], { phase: CeremonyPhase; finalisation_interrupted_at: number | null }>(
      'SELECT phase, finalisation_interrupted_at FROM ceremony_phase WHERE id = 1',
    ),
    update: db.prepare<[CeremonyPhase, number]>('UPDATE ceremony_phase SET phase = ?, updated_at = ? WHERE id = 1'),
    setInterrupted: db.prepare<[number | null]>(
      'UPDATE ceremony_phase SET finalisation_interrupted_at = ? WHERE id = 1',
    ),
  };
}
