/**
 * The lobby's tables (module 'lobby' in schema_migrations). Append new migrations, never edit one.
 *
 * - lobby_queue: one row per waiting contributor (a contributor waits for at most one circuit).
 *   seq is the enqueue order: AUTOINCREMENT never reuses a value, so a re-queued contributor always
 *   sorts after everyone already waiting. Position = COUNT of earlier rows of the same circuit,
 *   a range scan of lobby_queue_by_circuit.
 * - lobby_turns: the turn or verifying submission of each busy circuit. circuit is the primary key
 *   (one per circuit: the chain is extended by one contributor at a time) and contributor_id is
 *   unique (one per contributor across circuits).
 * - lobby_turn_history: every ended turn with its outcome; accepted rows give the ETA's averages.
 * - lobby_accepted: one accepted contribution per contributor per circuit (primary key).
 * - lobby_refusals: each contributor's last refusal, shown in their status.
 * - lobby_missed_turns (migration 2): missed turns per contributor per circuit; at the limit the
 *   entry leaves the queue.
 * - lobby_removals (migration 2): why a contributor's entry left the queue (too many missed turns,
 *   or the coordinator removed it), shown in their status until they join again.
 * - lobby_selections (migration 3): the circuits a contributor asked for when joining (a JSON
 *   array, in ceremony order); no row = every circuit. Replaced by each join.
 * - lobby_leaving (migration 3): contributors who left while a contribution of theirs was being
 *   verified: its verdict queues them nowhere (neither the next circuit nor the same one again).
 *   Cleared by the verdict, or by joining again.
 * - presence (migration 4): lobby_queue.away marks an entry passed over until its contributor is
 *   seen again (when it is seen is kept in memory only: after a restart every entry counts as seen
 *   at the start). lobby_turns.taken_at is when the turn was taken (its first download, heartbeat
 *   or upload), NULL until then; queue_seq and queue_enqueued_at are the entry's place, where an
 *   untaken turn puts it back. Turns granted before the migration count as taken.
 * - passed on (migration 6): lobby_queue.passed_on marks an entry back in its place after a turn
 *   it did not take: it is not eligible before the circuit's next turn has ended, unless nobody
 *   else may be granted (core/queue-log/turn-order.ts). Cleared when any turn of its circuit ends.
 * - lobby_missed_turns counts every turn ended without a contribution, and is never cleared.
 */
export const LOBBY_MIGRATIONS: readonly string[] = [
  `CREATE TABLE lobby_queue (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    contributor_id TEXT NOT NULL UNIQUE,
    circuit TEXT NOT NULL,
    enqueued_at INTEGER NOT NULL,
    eligible_at INTEGER NOT NULL
  );
  CREATE INDEX lobby_queue_by_circuit ON lobby_queue (circuit, seq, eligible_at);

  CREATE TABLE lobby_turns (
    circuit TEXT PRIMARY KEY,
    contributor_id TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL CHECK (state IN ('turn', 'verifying')),
    started_at INTEGER NOT NULL,
    deadline INTEGER NOT NULL,
    contribution_id TEXT UNIQUE,
    CHECK ((state = 'turn') = (contribution_id IS NULL))
  );

  CREATE TABLE lobby_turn_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    circuit TEXT NOT NULL,
    contributor_id TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    ended_at INTEGER NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('accepted', 'refused', 'discarded', 'missed')),
    contribution_id TEXT UNIQUE
  );
  CREATE INDEX lobby_turn_history_by_outcome ON lobby_turn_history (circuit, outcome, id);

  CREATE TABLE lobby_accepted (
    contributor_id TEXT NOT NULL,
    circuit TEXT NOT NULL,
    contribution_id TEXT NOT NULL UNIQUE,
    chain_index INTEGER NOT NULL,
    contribution_hash TEXT NOT NULL,
    accepted_at INTEGER NOT NULL,
    PRIMARY KEY (contributor_id, circuit)
  );

  CREATE TABLE lobby_refusals (
    contributor_id TEXT PRIMARY KEY,
    circuit TEXT NOT NULL,
    code TEXT NOT NULL,
    message TEXT NOT NULL,
    at INTEGER NOT NULL
  );`,
  `CREATE TABLE lobby_missed_turns (
    contributor_id TEXT NOT NULL,
    circuit TEXT NOT NULL,
    missed INTEGER NOT NULL,
    PRIMARY KEY (contributor_id, circuit)
  );

  CREATE TABLE lobby_removals (
    contributor_id TEXT PRIMARY KEY,
    circuit TEXT NOT NULL,
    reason TEXT NOT NULL CHECK (reason IN ('missed_turns', 'coordinator')),
    message TEXT NOT NULL,
    at INTEGER NOT NULL
  );`,
  `CREATE TABLE lobby_selections (
    contributor_id TEXT PRIMARY KEY,
    circuits TEXT NOT NULL
  );

  CREATE TABLE lobby_leaving (
    contributor_id TEXT PRIMARY KEY,
    at INTEGER NOT NULL
  );`,
  `ALTER TABLE lobby_queue ADD COLUMN away INTEGER NOT NULL DEFAULT 0 CHECK (away IN (0, 1));
  ALTER TABLE lobby_turns ADD COLUMN taken_at INTEGER;
  ALTER TABLE lobby_turns ADD COLUMN queue_seq INTEGER;
  ALTER TABLE lobby_turns ADD COLUMN queue_enqueued_at INTEGER;
  UPDATE lobby_turns SET taken_at = started_at;`,
  // The next cooldown to end (Lobby.nextDueAt, after every tick) without reading the whole queue.
  `CREATE INDEX lobby_queue_by_eligible_at ON lobby_queue (eligible_at);`,
  `ALTER TABLE lobby_queue ADD COLUMN passed_on INTEGER NOT NULL DEFAULT 0 CHECK (passed_on IN (0, 1));`,
];
