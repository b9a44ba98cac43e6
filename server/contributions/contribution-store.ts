/**
 * Contributions as the coordinator tracks them, from upload to verdict (table `contributions`).
 * A row in `verifying` is work the coordinator still owes: at start-up every such row is sent to
 * verification again (SQLite is the source of truth; Redis only holds jobs). The statuses and
 * the moves between them are the life cycle's (contribution-lifecycle.ts); a verdict is written
 * here and in the lobby in one transaction, by the ceremony service. Migration 2 adds the
 * candidates table (candidate-store.ts): what is known of each upload until its verdict.
 */
import { randomUUID } from 'node:crypto';
import { errorCodeOr, type ErrorCode } from '../../core/errors.ts';
import { applyMigrations, type Db } from '../store/database.ts';
import {
  CANDIDATE_REFUSAL_MIGRATION,
  CANDIDATE_SUMS_MIGRATION,
  CANDIDATES_MIGRATION,
  CandidateStore,
} from './candidate-store.ts';
import { CONTRIBUTION_STATUSES, type ContributionStatus, type SettledVerdict } from './contribution-lifecycle.ts';
import { VerdictWaiters } from './verdict-waiters.ts';

export type { ContributionStatus };

export interface ContributionRow {
  id: string;
  circuit: string;
  contributorId: string;
  contributorName: string;
  headIndex: number;
  candidatePath: string;
  size: number;
  fileHash: string;
  status: ContributionStatus;
  code: ErrorCode | null;
  message: string | null;
  contributionHash: string | null;
  chainIndex: number | null;
  createdAt: number;
  finishedAt: number | null;
}

const MIGRATIONS = [
  `CREATE TABLE contributions (
     id TEXT PRIMARY KEY,
     circuit TEXT NOT NULL,
     contributor_id TEXT NOT NULL,
     contributor_name TEXT NOT NULL,
     head_index INTEGER NOT NULL,
     candidate_path TEXT NOT NULL,
     size INTEGER NOT NULL,
     file_hash TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('verifying', 'accepted', 'refused', 'discarded', 'error')),
     code TEXT,
     message TEXT,
     contribution_hash TEXT,
     chain_index INTEGER,
     created_at INTEGER NOT NULL,
     finished_at INTEGER
   );
   CREATE INDEX contributions_by_status ON contributions (status);
   CREATE INDEX contributions_by_contributor ON contributions (contributor_id, created_at);
   CREATE TABLE receipts (
     contribution_id TEXT PRIMARY KEY REFERENCES contributions (id),
     body TEXT NOT NULL,
     signature TEXT NOT NULL
   );`,
  CANDIDATES_MIGRATION,
  CANDIDATE_SUMS_MIGRATION,
  CANDIDATE_REFUSAL_MIGRATION,
];

interface RawRow {
  id: string;
  circuit: string;
  contributor_id: string;
  contributor_name: string;
  head_index: number;
  candidate_path: string;
  size: number;
  file_hash: string;
  status: ContributionStatus;
  code: string | null;
  message: string | null;
  contribution_hash: string | null;
  chain_index: number | null;
  created_at: number;
  finished_at: number | null;
}

function fromRaw(row: RawRow): ContributionRow {
  return {
    id: row.id,
    circuit: row.circuit,
    contributorId: row.contributor_id,
    contributorName: row.contributor_name,
    headIndex: row.head_index,
    candidatePath: row.candidate_path,
    size: row.size,
    fileHash: row.file_hash,
    status: row.status,
    // A row written by another version may hold a code this one does not know.
    code: row.code === null ? null : errorCodeOr(row.code, 'internal'),
    message: row.message,
    contributionHash: row.contribution_hash,
    chainIndex: row.chain_index,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
  };
}

export interface Receipt {
  body: string;
  signature: string;
}

export class ContributionStore {
  private readonly statements: ContributionStatements;
  /** Each upload's facts until its verdict (candidate-store.ts), in this module's migrations. */
  readonly candidates: CandidateStore;
  /** Requests waiting for a verdict (GET /api/me?verdictWaitMs), answered by finish(). */
  readonly verdictWaiters = new VerdictWaiters();

  constructor(db: Db) {
    applyMigrations(db, 'contributions', MIGRATIONS);
    this.statements = prepareStatements(db);
    this.candidates = new CandidateStore(db);
  }

  create(
    input: Omit<
      ContributionRow,
      'id' | 'status' | 'code' | 'message' | 'contributionHash' | 'chainIndex' | 'finishedAt'
    >,
  ): ContributionRow {
    const id = randomUUID();
    this.statements.insert.run(
      id,
      input.circuit,
      input.contributorId,
      input.contributorName,
      input.headIndex,
      input.candidatePath,
      input.size,
      input.fileHash,
      input.createdAt,
    );
    // The row inserted just above, in this same synchronous call.
    return this.get(id)!;
  }

  get(id: string): ContributionRow | undefined {
    const row = this.statements.byId.get(id);
    return row && fromRaw(row);
  }

  byStatus(status: ContributionStatus): ContributionRow[] {
    return this.statements.byStatus.all(status).map(fromRaw);
  }

  forContributor(contributorId: string): ContributionRow[] {
    return this.statements.forContributor.all(contributorId).map(fromRaw);
  }

  /**
   * Moves a `verifying` row to its settled verdict (settleVerdict); returns false, changing
   * nothing, if it was already decided (a duplicate outcome).
   */
  finish(id: string, verdict: SettledVerdict, at: number): boolean {
    const result =
      verdict.status === 'accepted'
        ? this.statements.finish.run(verdict.status, null, null, verdict.contributionHash, verdict.chainIndex, at, id)
        : this.statements.finish.run(verdict.status, verdict.code, verdict.message, null, null, at, id);
    if (result.changes !== 1) return false;
    this.verdictWaiters.settled(id);
    return true;
  }

  saveReceipt(contributionId: string, receipt: Receipt): void {
    this.statements.saveReceipt.run(contributionId, receipt.body, receipt.signature);
  }

  receiptsFor(contributorId: string): Array<Receipt & { contributionId: string }> {
    return this.statements.receiptsFor.all(contributorId);
  }

  /** How many contributions are in each status (the console's overview). */
  counts(): Record<ContributionStatus, number> {
    const rows = this.statements.counts.all();
    const counts = Object.fromEntries(CONTRIBUTION_STATUSES.map((status) => [status, 0])) as Record<
      ContributionStatus,
      number
    >;
    for (const row of rows) counts[row.status] = row.n;
    return counts;
  }
}

type ContributionStatements = ReturnType<typeof prepareStatements>;

/** Every query of the store, prepared once. */
function prepareStatements(db: Db) {
  return {
    insert: db.prepare<[string, string, string, string, number, string, number, string, number]>(
      `INSERT INTO contributions (id, circuit, contributor_id, contributor_name, head_index, candidate_path,
         size, file_hash, status, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'verifying', ?)`,
    ),
    byId: db.prepare<[string], RawRow>('SELECT * FROM contributions WHERE id = ?'),
    byStatus: db.prepare<[ContributionStatus], RawRow>(
      'SELECT * FROM contributions WHERE status = ? ORDER BY created_at',
    ),
    forContributor: db.prepare<[string], RawRow>(
      'SELECT * FROM contributions WHERE contributor_id = ? ORDER BY created_at',
    ),
    finish: db.prepare<
      [SettledVerdict['status'], string | null, string | null, string | null, number | null, number, string]
    >(
      `UPDATE contributions
       SET status = ?, code = ?, message = ?, contribution_hash = ?, chain_index = ?, finished_at = ?
       WHERE id = ? AND status = 'verifying'`,
    ),
    saveReceipt: db.prepare<[string, string, string]>(
      'INSERT OR REPLACE INTO receipts (contribution_id, body, signature) VALUES (?, ?, ?)',
    ),
    receiptsFor: db.prepare<[string], Receipt & { contributionId: string }>(
      `SELECT r.contribution_id AS contributionId, r.body, r.signature FROM receipts r
       JOIN contributions c ON c.id = r.contribution_id WHERE c.contributor_id = ? ORDER BY c.created_at`,
    ),
    counts: db.prepare<[], { status: ContributionStatus; n: number }>(
      'SELECT status, COUNT(*) AS n FROM contributions GROUP BY status',
    ),
  };
}
