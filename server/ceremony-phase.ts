/**
 * The ceremony's phase as the coordinator runs it: `setup` (not yet opened), `open` (turns are
 * granted), `paused` (queues kept, no new turns), `closed` (no more contributions; ready to
 * finalise), `finalised`. Only coordinators change it.
 */
import { applyMigrations, type Db } from './store/database.ts';
import { CoordinatorError } from '../core/errors.ts';

export const PHASES = ['setup', 'open', 'paused', 'closed', 'finalised'] as const;
export type CeremonyPhase = (typeof PHASES)[number];

const ALLOWED: Record<CeremonyPhase, readonly CeremonyPhase[]> = {
  setup: ['open', 'closed'],
  open: ['paused', 'closed'],
  paused: ['open', 'closed'],
  closed: ['open', 'finalised'],
  finalised: [],
};

export class CeremonyPhaseStore {
  /** Prepared once: get() runs on every lobby tick and every request that checks the phase. */
  private readonly statements: PhaseStatements;

  constructor(db: Db) {
    applyMigrations(db, 'phase', [
      `CREATE TABLE ceremony_phase (id INTEGER PRIMARY KEY CHECK (id = 1), phase TEXT NOT NULL, updated_at INTEGER NOT NULL);
       INSERT INTO ceremony_phase (id, phase, updated_at) VALUES (1, 'setup', 0);`,
    ]);
    this.statements = prepareStatements(db);
  }

  get(): CeremonyPhase {
    return this.statements.select.get()!.phase;
  }

  set(next: CeremonyPhase, at: number): CeremonyPhase {
    const current = this.get();
    if (current === next) return current;
    if (!ALLOWED[current].includes(next)) {
      throw new CoordinatorError('ceremony.invalid_phase_change', `the ceremony cannot go from ${current} to ${next}`);
    }
    this.statements.update.run(next, at);
    return next;
  }
}

type PhaseStatements = ReturnType<typeof prepareStatements>;

function prepareStatements(db: Db) {
  return {
    select: db.prepare<[], { phase: CeremonyPhase }>('SELECT phase FROM ceremony_phase WHERE id = 1'),
    update: db.prepare<[CeremonyPhase, number]>('UPDATE ceremony_phase SET phase = ?, updated_at = ? WHERE id = 1'),
  };
}
