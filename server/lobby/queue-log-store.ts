/**
 * The queue log as the coordinator keeps it (module 'queue-log' in schema_migrations): the public,
 * hash-chained log of every lobby step (core/queue-log/queue-log-entry.ts), the contributors'
 * public ids, and the signed receipts of joins, refusals and removals.
 *
 * Crash safety. SQLite is the log's source of truth: the lobby appends each entry (and signs its
 * receipt) inside the very transaction that makes the change it records, so the database and its
 * log cannot disagree, whatever stops the process when. The public file (`transcript/queue-log.jsonl`
 * of the data folder, what `ceremony publish` copies) is a mirror, appended only after the
 * transaction committed, with exactly the text the table holds: at any moment it is a prefix of the
 * table's log, at worst missing its last entries or ending in a torn line. At start-up it is
 * brought level: kept and completed when it is a prefix line for line, else rewritten from the
 * table through a temporary file and a rename. A file holding entries the table lacks (a database
 * restored from an old copy) stops the start: the public already saw those entries.
 */
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { CoordinatorError } from '../../core/errors.ts';
import { tempPathFor } from '../../core/fs/atomic-write.ts';
import {
  queueLogGenesisHash,
  type QueueLogEntry,
  type QueueLogEntryType,
  type QueueLogEvent,
  type QueueRules,
  type StepEntry,
} from '../../core/queue-log/queue-log-entry.ts';
import { stepReceiptBody, type StepReceiptBody } from '../../core/receipts/step-receipt.ts';
import { chainEntryHash } from '../../core/transcript/hash-chain.ts';
import { applyMigrations, type Db } from '../store/database.ts';

const MIGRATIONS = [
  `CREATE TABLE queue_log (
     seq INTEGER PRIMARY KEY,
     type TEXT NOT NULL,
     circuit TEXT,
     contributor TEXT,
     name TEXT,
     line TEXT NOT NULL,
     hash TEXT NOT NULL
   );
   CREATE INDEX queue_log_by_circuit ON queue_log (circuit, seq);
   CREATE INDEX queue_log_by_contributor ON queue_log (contributor, seq);
   CREATE TABLE queue_log_identities (
     contributor_id TEXT PRIMARY KEY,
     public_id TEXT NOT NULL UNIQUE,
     name TEXT NOT NULL
   );
   CREATE TABLE queue_step_receipts (
     seq INTEGER PRIMARY KEY REFERENCES queue_log (seq),
     contributor_id TEXT NOT NULL,
     body TEXT NOT NULL,
     signature TEXT NOT NULL
   );
   CREATE INDEX queue_step_receipts_by_contributor ON queue_step_receipts (contributor_id, seq);`,
];

export interface QueueLogOptions {
  ceremonyId: string;
  /** The public mirror (absolute path); none: no file (tests on an in-memory database). */
  file?: string;
  /** Signs a step receipt (the coordinator's receipt key); none: no step receipts. */
  sign?: (body: StepReceiptBody) => { body: string; signature: string };
  /** Told when the mirror could not be written (it is rewritten at the next flush). */
  warn?: (message: string, fields?: Record<string, unknown>) => void;
}

/** Who a step is about, as the public log names them. */
export interface PublicIdentity {
  contributor: string;
  name: string;
}

export interface QueueLogQuery {
  /** Entries after this seq, oldest first. */
  after?: number;
  /** Entries before this seq, newest first (takes precedence over `after`). */
  before?: number;
  limit: number;
  circuit?: string;
  type?: QueueLogEntryType;
  /** A public id, or part of a name. */
  search?: string;
}

export interface StoredStepReceipt {
  seq: number;
  body: string;
  signature: string;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** A step as the lobby proposes it; the store names the contributor and chains it. */
export type ProposedStep = DistributiveOmit<Exclude<QueueLogEvent, { type: 'rules' }>, 'contributor' | 'name'>;

export class QueueLogStore {
  private readonly statements: ReturnType<typeof prepareStatements>;
  /** The last seq the mirror holds (-1: none). */
  private written = -1;
  private rewrite = false;
  private flushScheduled = false;

  constructor(
    private readonly db: Db,
    private readonly options: QueueLogOptions,
  ) {
    applyMigrations(db, 'queue-log', MIGRATIONS);
    this.statements = prepareStatements(db);
    if (options.file) this.levelFile(options.file);
  }

  /**
   * The contributor's public id, drawn once (a random pseudonym for an anonymous contributor), and
   * their name, updated when `name` is given. Call inside the lobby's transaction.
   */
  identify(contributorId: string, name?: string): PublicIdentity {
    const known = this.statements.identityOf.get(contributorId);
    if (known) {
      if (name !== undefined && name !== known.name && !isAnonymous(contributorId))
        this.statements.rename.run(name, contributorId);
      return { contributor: known.public_id, name: isAnonymous(contributorId) ? known.name : (name ?? known.name) };
    }
    const identity = isAnonymous(contributorId)
      ? { contributor: `anonymous:${randomBytes(8).toString('hex')}`, name: 'anonymous' }
      : { contributor: contributorId, name: name ?? contributorId.slice(contributorId.indexOf(':') + 1) };
    this.statements.addIdentity.run(contributorId, identity.contributor, identity.name);
    return identity;
  }

  /** Appends a `rules` entry when the rules differ from the last stated (at start-up). */
  stateRules(rules: QueueRules, at: number): void {
    const last = this.statements.lastRules.get();
    const stated = last ? (JSON.parse(last.line) as QueueLogEntry) : undefined;
    const same =
      stated?.type === 'rules' &&
      (Object.keys(rules) as Array<keyof QueueRules>).every(
        (key) => JSON.stringify(stated[key]) === JSON.stringify(rules[key]),
      );
    if (!same) this.db.transaction(() => this.appendEntry({ type: 'rules', ...rules }, at))();
    this.flush();
  }

  /**
   * Appends one step of `contributorId` at `at`, and signs its receipt when the step has one.
   * Must run inside the transaction that makes the change it records.
   */
  append(contributorId: string, step: ProposedStep, at: number): StepEntry {
    const identity = this.identify(contributorId);
    const entry = this.appendEntry({ ...step, ...identity } as QueueLogEvent, at) as StepEntry;
    const body = this.options.sign && stepReceiptBody(this.options.ceremonyId, entry);
    if (body) {
      const signed = this.options.sign!(body);
      this.statements.saveReceipt.run(entry.seq, contributorId, signed.body, signed.signature);
    }
    return entry;
  }

  private appendEntry(event: QueueLogEvent, at: number): QueueLogEntry {
    const last = this.statements.last.get();
    const unsigned = {
      ...event,
      seq: last ? last.seq + 1 : 0,
      time: new Date(at).toISOString(),
      prevHash: last?.hash ?? queueLogGenesisHash(this.options.ceremonyId),
    };
    const entry = { ...unsigned, hash: chainEntryHash(unsigned) } as QueueLogEntry;
    const step = entry.type === 'rules' ? undefined : entry;
    this.statements.append.run(
      entry.seq,
      entry.type,
      step?.circuit ?? null,
      step?.contributor ?? null,
      step?.name ?? null,
      JSON.stringify(entry),
      entry.hash,
    );
    this.scheduleFlush();
    return entry;
  }

  /** The receipts of this contributor's steps, oldest first. */
  stepReceiptsFor(contributorId: string): StoredStepReceipt[] {
    return this.statements.receiptsFor.all(contributorId);
  }

  /**
   * The newest `limit` receipts of this contributor's steps before `before` (a seq; all when absent), oldest first,
   * and how many older ones the page leaves out.
   */
  stepReceiptsPage(
    contributorId: string,
    limit: number,
    before?: number,
  ): { steps: StoredStepReceipt[]; older: number } {
    const bound = before ?? Number.MAX_SAFE_INTEGER;
    const steps = this.statements.receiptsBefore.all(contributorId, bound, limit).reverse();
    const older = steps.length === 0 ? 0 : this.statements.countReceiptsBefore.get(contributorId, steps[0]!.seq)!.n;
    return { steps, older };
  }

  /** A page of the log (GET /api/queue-log), filtered. */
  page(query: QueueLogQuery): { entries: QueueLogEntry[]; total: number } {
    const where: string[] = [];
    const params: Array<string | number> = [];
    if (query.circuit !== undefined) (where.push('circuit = ?'), params.push(query.circuit));
    if (query.type !== undefined) (where.push('type = ?'), params.push(query.type));
    if (query.search !== undefined) {
      where.push("(contributor = ? OR name LIKE ? ESCAPE '\\')");
      params.push(query.search, `%${query.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    }
    const newestFirst = query.before !== undefined;
    if (newestFirst) (where.push('seq < ?'), params.push(query.before!));
    else if (query.after !== undefined) (where.push('seq > ?'), params.push(query.after));
    const sql =
      `SELECT line FROM queue_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ` +
      `ORDER BY seq ${newestFirst ? 'DESC' : 'ASC'} LIMIT ?`;
    const rows = this.db.prepare<Array<string | number>, { line: string }>(sql).all(...params, query.limit);
    return {
      entries: rows.map((row) => JSON.parse(row.line) as QueueLogEntry),
      total: this.statements.count.get()!.n,
    };
  }

  /** Every entry, oldest first (tests, the console). */
  entries(): QueueLogEntry[] {
    return this.statements.lines.all(-1).map((row) => JSON.parse(row.line) as QueueLogEntry);
  }

  /**
   * Brings the mirror level with the table: appends what committed since the last flush. Inside a
   * transaction (nothing committed yet) it only schedules itself for when the transaction is over.
   */
  flush(): void {
    const file = this.options.file;
    if (!file || !this.db.open) return;
    if (this.db.inTransaction) return this.scheduleFlush();
    try {
      if (this.rewrite) {
        rewriteFile(file, this.statements.lines.all(-1));
        this.rewrite = false;
        this.written = this.statements.last.get()?.seq ?? -1;
        return;
      }
      const rows = this.statements.lines.all(this.written);
      if (rows.length === 0) return;
      appendFileSync(file, rows.map((row) => `${row.line}\n`).join(''));
      this.written = rows.at(-1)!.seq;
    } catch (error) {
      // A full disk, say: SQLite holds the log; the whole file is written again next time.
      this.rewrite = true;
      this.options.warn?.('could not write the public queue log; it is rewritten at the next change', {
        code: (error as NodeJS.ErrnoException).code ?? (error as Error).name,
      });
    }
  }

  private scheduleFlush(): void {
    if (!this.options.file || this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    }).unref();
  }

  /** Start-up: the mirror made a line-for-line prefix of the table, then completed (see the header). */
  private levelFile(file: string): void {
    const rows = this.statements.lines.all(-1);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      text = '';
    }
    const lines = text.split('\n');
    // A text ending in a newline splits into its lines and one empty string; anything else is a torn line.
    const torn = lines.pop() !== '';
    if (lines.length > rows.length) throw aheadOfDatabase(file);
    if (torn || !lines.every((line, i) => rows[i]!.line === line)) {
      rewriteFile(file, rows);
      this.written = rows.at(-1)?.seq ?? -1;
      return;
    }
    this.written = lines.length - 1;
    this.flush();
  }
}

function aheadOfDatabase(file: string): CoordinatorError {
  return new CoordinatorError(
    'config.invalid',
    `the public queue log ${path.basename(file)} holds entries the coordinator's database does not ` +
      '(a database restored from an older copy, or another coordinator’s?); the public has seen them, so the ' +
      'coordinator does not start: restore the database, or move the log aside to start a new one',
  );
}

/** Writes every line to a temporary file, flushes it, and renames it over `file`. */
function rewriteFile(file: string, rows: ReadonlyArray<{ line: string }>): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temp = tempPathFor(file);
  const fd = openSync(temp, 'w');
  try {
    writeSync(fd, rows.map((row) => `${row.line}\n`).join(''));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
}

/** Semaphore sign-ins: their id (a nullifier) never leaves the coordinator. */
function isAnonymous(contributorId: string): boolean {
  return contributorId.startsWith('semaphore:');
}

function prepareStatements(db: Db) {
  return {
    last: db.prepare<[], { seq: number; hash: string }>('SELECT seq, hash FROM queue_log ORDER BY seq DESC LIMIT 1'),
    lastRules: db.prepare<[], { line: string }>(
      "SELECT line FROM queue_log WHERE type = 'rules' ORDER BY seq DESC LIMIT 1",
    ),
    append: db.prepare<[number, string, string | null, string | null, string | null, string, string]>(
      'INSERT INTO queue_log (seq, type, circuit, contributor, name, line, hash) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    lines: db.prepare<[number], { seq: number; line: string }>(
      'SELECT seq, line FROM queue_log WHERE seq > ? ORDER BY seq',
    ),
    count: db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM queue_log'),
    identityOf: db.prepare<[string], { public_id: string; name: string }>(
      'SELECT public_id, name FROM queue_log_identities WHERE contributor_id = ?',
    ),
    addIdentity: db.prepare<[string, string, string]>(
      'INSERT INTO queue_log_identities (contributor_id, public_id, name) VALUES (?, ?, ?)',
    ),
    rename: db.prepare<[string, string]>('UPDATE queue_log_identities SET name = ? WHERE contributor_id = ?'),
    saveReceipt: db.prepare<[number, string, string, string]>(
      'INSERT INTO queue_step_receipts (seq, contributor_id, body, signature) VALUES (?, ?, ?, ?)',
    ),
    receiptsFor: db.prepare<[string], StoredStepReceipt>(
      'SELECT seq, body, signature FROM queue_step_receipts WHERE contributor_id = ? ORDER BY seq',
    ),
    receiptsBefore: db.prepare<[string, number, number], StoredStepReceipt>(
      'SELECT seq, body, signature FROM queue_step_receipts WHERE contributor_id = ? AND seq < ? ' +
        'ORDER BY seq DESC LIMIT ?',
    ),
    countReceiptsBefore: db.prepare<[string, number], { n: number }>(
      'SELECT COUNT(*) AS n FROM queue_step_receipts WHERE contributor_id = ? AND seq < ?',
    ),
  };
}
