/**
 * One writer at a time per data folder. The lock is the kernel's: an exclusive SQLite transaction on
 * a file of the folder, which SQLite takes with a POSIX (fcntl) lock. Every process whose kernel
 * sees the folder sees it, whatever container or PID namespace it runs in, and the kernel drops it
 * the moment its holder ends, kill -9 included, so a crash leaves nothing to clear or to judge stale.
 *
 * Why not a file holding the holder's pid, as before: a pid names a process only inside its own
 * PID namespace. The coordinator in its container and `docker compose run … finalise` in another
 * are each pid 1, so each took the other's live lock for its own stale one and wrote beside it (a
 * commit during a finalisation, two rewrites of the transcript, one link lost); and a pid reused
 * after a crash kept a dead writer's lock for ever (docs/architecture.md, crash safety).
 *
 * Beside the lock, its holder leaves a note (`<lock>.holder`: pid, host, command, since) so that a
 * refusal can say who holds it; the note is for people, the lock alone decides.
 */
import { hostname } from 'node:os';
import { mkdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { CoordinatorError } from '../errors.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';

interface HolderNote {
  pid: number;
  host: string;
  /** `ceremony <subcommand>` of the holder, or undefined when it was not started as the CLI. */
  command?: string;
  since: string;
}

const holderNotePath = (lockPath: string) => `${lockPath}.holder`;

/** The lock held by this process, or undefined when another process holds it (SQLITE_BUSY). */
function tryLock(lockPath: string): Database.Database | undefined {
  mkdirSync(path.dirname(lockPath), { recursive: true });
  // timeout 0: a held lock answers at once rather than after better-sqlite3's 5 s of retries.
  const db = new Database(lockPath, { timeout: 0 });
  try {
    // Rollback-journal mode and no write: the file stays empty, nothing beside it but the note.
    db.exec('BEGIN EXCLUSIVE');
    return db;
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return undefined;
    throw error;
  }
}

/** The CLI's subcommand only: the message may reach the console, and arguments name paths. */
function cliCommand(): string | undefined {
  const subcommand = process.argv[2];
  return subcommand !== undefined && /^[a-z][a-z-]{0,30}$/.test(subcommand) ? `ceremony ${subcommand}` : undefined;
}

function readHolderNote(lockPath: string): HolderNote | undefined {
  try {
    const note = JSON.parse(readFileSync(holderNotePath(lockPath), 'utf8')) as Partial<HolderNote>;
    if (typeof note.pid !== 'number' || typeof note.host !== 'string' || typeof note.since !== 'string')
      return undefined;
    return {
      pid: note.pid,
      host: note.host,
      command: typeof note.command === 'string' ? note.command : undefined,
      since: note.since,
    };
  } catch {
    return undefined; // no note yet (the holder has just taken the lock), or one being replaced
  }
}

function lockedError(lockPath: string): CoordinatorError {
  const note = readHolderNote(lockPath);
  const who = note
    ? ` (${note.command ? `\`${note.command}\`, ` : ''}pid ${note.pid} on host ${note.host}, since ${note.since})`
    : '';
  return new CoordinatorError(
    'ceremony.locked',
    `another ceremony process${who} is changing this data folder; try again when it is done`,
  );
}

/**
 * The callers of this process, queued per lock file: they wait for each other here rather than one
 * being refused by the kernel's lock that another caller of the same process holds.
 */
const queues = new Map<string, Promise<void>>();

export async function withCeremonyLock<T>(lockPath: string, work: () => Promise<T>): Promise<T> {
  const key = path.resolve(lockPath);
  const previous = queues.get(key) ?? Promise.resolve();
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  // Never rejects: each link waits for the previous caller's release, not for its work.
  const turn = previous.then(() => finished);
  queues.set(key, turn);
  await previous;
  try {
    const lock = tryLock(key);
    if (!lock) throw lockedError(key);
    try {
      const note: HolderNote = {
        pid: process.pid,
        host: hostname(),
        command: cliCommand(),
        since: new Date().toISOString(),
      };
      await writeFileAtomic(holderNotePath(key), `${JSON.stringify(note)}\n`);
      return await work();
    } finally {
      // The note first: once the lock is free, the next holder writes its own.
      await rm(holderNotePath(key), { force: true }).catch(() => undefined);
      lock.exec('ROLLBACK');
      lock.close();
    }
  } finally {
    done();
    if (queues.get(key) === turn) queues.delete(key);
  }
}
