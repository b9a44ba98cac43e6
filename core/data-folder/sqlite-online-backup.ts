/**
 * A consistent copy of a SQLite database that another process is writing: SQLite's online backup
 * (better-sqlite3's `backup`), which copies the pages of one read snapshot and starts again if
 * another connection writes between its steps, so the copy is the database as it stood at one
 * moment, whatever the coordinator did meanwhile (its WAL mode lets it go on writing). Every page
 * is asked for in one step, so a busy coordinator cannot keep it starting over. The copy is then
 * checked (`PRAGMA quick_check`) and flushed to disk, apart, after any lock its caller held is released.
 */
import { open } from 'node:fs/promises';
import Database from 'better-sqlite3';
import { CoordinatorError } from '../errors.ts';

/**
 * Pages per step after the first: all of them. Not the count the last step saw: a database another
 * process keeps writing has grown by the next step, which then copies less than all, and the write
 * between two steps starts the copy over, for ever (measured: a writer at 4000 rows a second).
 */
const ALL_PAGES = 0x7fffffff;

export interface DatabaseCopy {
  bytes: number;
  pages: number;
}

/**
 * The snapshot alone, the part a caller holding a lock waits for (about 0.5 s for a 68 MB database,
 * docs/operations.md#backups-and-restoring); `settleDatabaseCopy` then checks and flushes it.
 */
export async function copySqliteOnline(source: string, target: string): Promise<void> {
  // Read-write, as the coordinator opens it: a read-only connection to a WAL database needs its
  // shared-memory file to exist already. Nothing is written through it.
  const db = new Database(source, { fileMustExist: true, timeout: 5000 });
  try {
    await db.backup(target, { progress: () => ALL_PAGES });
  } finally {
    db.close();
  }
}

/** Checks a copy (`quick_check`), makes it one file (no -wal beside it) and flushes it. */
export async function settleDatabaseCopy(target: string): Promise<DatabaseCopy> {
  const copy = new Database(target, { fileMustExist: true });
  let pages: number;
  try {
    const check = copy.pragma('quick_check', { simple: true });
    if (check !== 'ok')
      throw new CoordinatorError('config.invalid', `the copy of the database does not pass SQLite's quick_check`);
    copy.pragma('journal_mode = DELETE');
    pages = copy.pragma('page_count', { simple: true }) as number;
  } finally {
    copy.close();
  }
  const handle = await open(target, 'r+');
  try {
    await handle.sync();
    return { bytes: (await handle.stat()).size, pages };
  } finally {
    await handle.close();
  }
}
