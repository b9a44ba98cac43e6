/**
 * Whether a coordinator's queue log has begun on a data folder, and the refusal of a contribution
 * made there outside it. Once the log has begun, the audit replays it against the transcript and
 * fails a link that has no acceptance in it (`audit.queue_log_mismatch`, core/audit/check-queue-
 * fairness.ts): a contribution added to the chains by `ceremony contribute CIRCUIT|--all` on the
 * folder, beside or after the coordinator, would make the ceremony fail its audit for good, found
 * only once it is finalised and published. So the local contribution is refused at once.
 *
 * The log has begun when its public file (transcript/queue-log.jsonl, what `ceremony publish`
 * copies and the audit replays) holds an entry, or when the coordinator's database (its source of
 * truth, which a coordinator's next start writes out to that file) does: the first start of a
 * coordinator states its rules there, before anyone joins. A database that cannot be read is taken
 * to hold one (refused, saying so): this check fails closed.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { CoordinatorError } from '../errors.ts';
import { QUEUE_LOG_FILE } from './queue-log-entry.ts';

/** The coordinator's default database, and its log's table (server/store, server/lobby/queue-log-store.ts). */
const DATABASE_FILE = 'state/coordinator.sqlite';
const QUEUE_LOG_TABLE = 'queue_log';

/** What shows the log has begun, in words, or undefined when it has not. */
export async function queueLogBegun(dataDir: string): Promise<string | undefined> {
  const text = await readFile(path.join(dataDir, QUEUE_LOG_FILE), 'utf8').catch(() => '');
  const lines = text.split('\n').filter((line) => line.trim() !== '').length;
  if (lines > 0) return `its queue log ${QUEUE_LOG_FILE} holds ${lines} entr${lines === 1 ? 'y' : 'ies'}`;
  const database = path.resolve(dataDir, DATABASE_FILE);
  if (
    !(await stat(database).then(
      (info) => info.isFile() && info.size > 0,
      () => false,
    ))
  )
    return undefined;
  try {
    const db = new Database(database, { readonly: true, fileMustExist: true, timeout: 5000 });
    try {
      const row = db.prepare(`SELECT COUNT(*) AS n FROM ${QUEUE_LOG_TABLE}`).get() as { n: number };
      return row.n > 0 ? `the coordinator's database holds ${row.n} entries of its queue log` : undefined;
    } finally {
      db.close();
    }
  } catch (error) {
    if (/no such table/.test((error as Error).message)) return undefined;
    return `the coordinator's database ${path.basename(database)} cannot be read to tell (${(error as Error).message})`;
  }
}

/** Refuses (`ceremony.outside_queue_log`) a contribution made on `dataDir` outside its coordinator's queue. */
export async function refuseOutsideQueueLog(dataDir: string): Promise<void> {
  const evidence = await queueLogBegun(dataDir);
  if (evidence === undefined) return;
  throw new CoordinatorError(
    'ceremony.outside_queue_log',
    `a coordinator's queue log has begun on this data folder (${evidence}); from then on every contribution ` +
      "must be accepted through its queue, or the ceremony's audit fails (audit.queue_log_mismatch: a link with " +
      'no acceptance in the log). Nothing was changed. Contribute in the queue instead: serve the folder ' +
      '(ceremony serve) and run `ceremony contribute --coordinator URL --github` (or another sign-in) ' +
      'from any machine',
  );
}
