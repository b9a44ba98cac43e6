/**
 * The lobby's SQL: the rows it reads and every statement it runs, prepared once per database. The
 * tables are lobby-schema.ts's. A statement runs in the transaction of whoever calls it: the
 * Lobby's moves each run in one (lobby.ts), so nothing here opens one.
 */
import type { TurnOutcome } from '../contributions/contribution-lifecycle.ts';
import type { Db } from '../store/database.ts';
import type { LobbyRemoval } from './lobby-types.ts';
import type { TurnTimes } from './lobby-rules.ts';

export interface QueueRow {
  seq: number;
  contributor_id: string;
  circuit: string;
  enqueued_at: number;
  eligible_at: number;
  away: 0 | 1;
  passed_on: 0 | 1;
}

export interface TurnRow {
  circuit: string;
  contributor_id: string;
  /** The two states of the life cycle a turn is held in (lobby_turns' CHECK). */
  state: 'turn' | 'verifying';
  started_at: number;
  deadline: number;
  contribution_id: string | null;
  taken_at: number | null;
  queue_seq: number | null;
  queue_enqueued_at: number | null;
}

interface AcceptedRow {
  circuit: string;
  contribution_id: string;
  chain_index: number;
  contribution_hash: string;
}

interface RemovalRow {
  circuit: string;
  reason: LobbyRemoval['reason'];
  message: string;
  at: number;
}

interface RefusalRow {
  circuit: string;
  code: string;
  message: string;
  at: number;
}

/** A turn row's times, as the rules (lobby-rules.ts) read them. */
export function turnTimes(turn: TurnRow): TurnTimes {
  return { startedAt: turn.started_at, deadline: turn.deadline, takenAt: turn.taken_at };
}

export type LobbyStatements = ReturnType<typeof prepareStatements>;

/** Every query of the lobby, prepared once. */
export function prepareStatements(db: Db) {
  return { ...queueStatements(db), ...turnStatements(db), ...recordStatements(db) };
}

/** The queues (lobby_queue). */
function queueStatements(db: Db) {
  return {
    queueEntryOf: db.prepare<[string], QueueRow>('SELECT * FROM lobby_queue WHERE contributor_id = ?'),
    positionOf: db.prepare<[string, number], { ahead: number }>(
      'SELECT COUNT(*) AS ahead FROM lobby_queue WHERE circuit = ? AND seq < ?',
    ),
    queueLengths: db.prepare<[], { circuit: string; waiting: number }>(
      'SELECT circuit, COUNT(*) AS waiting FROM lobby_queue GROUP BY circuit',
    ),
    enqueue: db.prepare<[string, string, number, number]>(
      'INSERT INTO lobby_queue (contributor_id, circuit, enqueued_at, eligible_at) VALUES (?, ?, ?, ?)',
    ),
    dequeue: db.prepare<[string]>('DELETE FROM lobby_queue WHERE contributor_id = ?'),
    // An untaken turn's entry, back at its old seq (its place), away and passed on.
    restore: db.prepare<[number | null, string, string, number, number]>(
      'INSERT INTO lobby_queue (seq, contributor_id, circuit, enqueued_at, eligible_at, away, passed_on) ' +
        'VALUES (?, ?, ?, ?, ?, 1, 1)',
    ),
    setPassedOn: db.prepare<[string]>('UPDATE lobby_queue SET passed_on = 1 WHERE contributor_id = ?'),
    releasePassedOn: db.prepare<[string]>('UPDATE lobby_queue SET passed_on = 0 WHERE circuit = ? AND passed_on = 1'),
    setAway: db.prepare<[0 | 1, string]>('UPDATE lobby_queue SET away = ? WHERE contributor_id = ?'),
    allQueued: db.prepare<[], { contributor_id: string }>('SELECT contributor_id FROM lobby_queue'),
    // The circuit's queue in FIFO order (turn-order.ts's firstInLine reads it as far as it needs).
    queueOfCircuitInOrder: db.prepare<[string], QueueRow>('SELECT * FROM lobby_queue WHERE circuit = ? ORDER BY seq'),
    queueOfCircuit: db.prepare<[string, number], QueueRow & { missed: number }>(
      `SELECT q.*, COALESCE(m.missed, 0) AS missed FROM lobby_queue q
       LEFT JOIN lobby_missed_turns m ON m.contributor_id = q.contributor_id AND m.circuit = q.circuit
       WHERE q.circuit = ? ORDER BY q.seq LIMIT ?`,
    ),
    nextEligibleAt: db.prepare<[number], { at: number | null }>(
      'SELECT MIN(eligible_at) AS at FROM lobby_queue WHERE eligible_at > ?',
    ),
  };
}

/** The circuits' turns and their history (lobby_turns, lobby_turn_history). */
function turnStatements(db: Db) {
  return {
    turnOfCircuit: db.prepare<[string], TurnRow>('SELECT * FROM lobby_turns WHERE circuit = ?'),
    turnOfContributor: db.prepare<[string], TurnRow>('SELECT * FROM lobby_turns WHERE contributor_id = ?'),
    turnOfContribution: db.prepare<[string], TurnRow>('SELECT * FROM lobby_turns WHERE contribution_id = ?'),
    allTurns: db.prepare<[], TurnRow>('SELECT * FROM lobby_turns ORDER BY started_at, circuit'),
    expiredTurns: db.prepare<[number], TurnRow>(
      "SELECT * FROM lobby_turns WHERE state = 'turn' AND deadline < ? ORDER BY deadline",
    ),
    takenTurns: db.prepare<[], TurnRow>(
      "SELECT * FROM lobby_turns WHERE state = 'turn' AND taken_at IS NOT NULL ORDER BY started_at, circuit",
    ),
    // Not taken by their time (startedAt + takeTurnMs), or by their deadline if that comes first.
    untakenTurns: db.prepare<[number, number, number], TurnRow>(
      `SELECT * FROM lobby_turns WHERE state = 'turn' AND taken_at IS NULL
         AND (started_at + ? < ? OR deadline < ?) ORDER BY started_at, circuit`,
    ),
    grantTurn: db.prepare<[string, string, number, number, number | null, number, number]>(
      'INSERT INTO lobby_turns (circuit, contributor_id, state, started_at, deadline, taken_at, queue_seq, ' +
        "queue_enqueued_at) VALUES (?, ?, 'turn', ?, ?, ?, ?, ?)",
    ),
    setTaken: db.prepare<[number, string]>('UPDATE lobby_turns SET taken_at = ? WHERE circuit = ?'),
    setDeadline: db.prepare<[number, string]>('UPDATE lobby_turns SET deadline = ? WHERE circuit = ?'),
    setVerifying: db.prepare<[TurnRow['state'], string, string]>(
      'UPDATE lobby_turns SET state = ?, contribution_id = ? WHERE circuit = ?',
    ),
    endTurn: db.prepare<[string]>('DELETE FROM lobby_turns WHERE circuit = ?'),
    logTurn: db.prepare<[string, string, number, number, TurnOutcome, string | null]>(
      'INSERT INTO lobby_turn_history (circuit, contributor_id, started_at, ' +
        'ended_at, outcome, contribution_id) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    historyOfContribution: db.prepare<[string], { outcome: TurnOutcome }>(
      'SELECT outcome FROM lobby_turn_history WHERE contribution_id = ?',
    ),
    averageTurn: db.prepare<[string, number], { average: number | null }>(
      `SELECT AVG(ended_at - started_at) AS average FROM (
         SELECT started_at, ended_at FROM lobby_turn_history
         WHERE circuit = ? AND outcome = 'accepted' ORDER BY id DESC LIMIT ?)`,
    ),
  };
}

/** What is kept of each contributor: accepted contributions, missed turns, removals, choices, leaving, refusals. */
function recordStatements(db: Db) {
  return {
    acceptedOf: db.prepare<[string], AcceptedRow>(
      'SELECT circuit, contribution_id, chain_index, contribution_hash FROM lobby_accepted WHERE contributor_id = ?',
    ),
    recordAccepted: db.prepare<[string, string, string, number, string, number]>(
      'INSERT INTO lobby_accepted (contributor_id, circuit, contribution_id, ' +
        'chain_index, contribution_hash, accepted_at) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    countMissed: db.prepare<[string, string], { missed: number }>(
      `INSERT INTO lobby_missed_turns (contributor_id, circuit, missed) VALUES (?, ?, 1)
       ON CONFLICT (contributor_id, circuit) DO UPDATE SET missed = missed + 1 RETURNING missed`,
    ),
    missedOf: db.prepare<[string, string], { missed: number }>(
      'SELECT missed FROM lobby_missed_turns WHERE contributor_id = ? AND circuit = ?',
    ),
    removalOf: db.prepare<[string], RemovalRow>(
      'SELECT circuit, reason, message, at FROM lobby_removals WHERE contributor_id = ?',
    ),
    recordRemoval: db.prepare<[string, string, LobbyRemoval['reason'], string, number]>(
      `INSERT INTO lobby_removals (contributor_id, circuit, reason, message, at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (contributor_id) DO UPDATE
       SET circuit = excluded.circuit, reason = excluded.reason, message = excluded.message, at = excluded.at`,
    ),
    clearRemoval: db.prepare<[string]>('DELETE FROM lobby_removals WHERE contributor_id = ?'),
    selectionOf: db.prepare<[string], { circuits: string }>(
      'SELECT circuits FROM lobby_selections WHERE contributor_id = ?',
    ),
    setSelection: db.prepare<[string, string]>(
      'INSERT INTO lobby_selections (contributor_id, circuits) VALUES (?, ?) ' +
        'ON CONFLICT (contributor_id) DO UPDATE SET circuits = excluded.circuits',
    ),
    clearSelection: db.prepare<[string]>('DELETE FROM lobby_selections WHERE contributor_id = ?'),
    leavingOf: db.prepare<[string], { at: number }>('SELECT at FROM lobby_leaving WHERE contributor_id = ?'),
    markLeaving: db.prepare<[string, number]>(
      'INSERT OR REPLACE INTO lobby_leaving (contributor_id, at) VALUES (?, ?)',
    ),
    clearLeaving: db.prepare<[string]>('DELETE FROM lobby_leaving WHERE contributor_id = ?'),
    refusalOf: db.prepare<[string], RefusalRow>(
      'SELECT circuit, code, message, at FROM lobby_refusals WHERE contributor_id = ?',
    ),
    recordRefusal: db.prepare<[string, string, string, string, number]>(
      `INSERT INTO lobby_refusals (contributor_id, circuit, code, message, at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (contributor_id) DO UPDATE
       SET circuit = excluded.circuit, code = excluded.code, message = excluded.message, at = excluded.at`,
    ),
  };
}
