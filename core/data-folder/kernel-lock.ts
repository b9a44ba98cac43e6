/**
 * A lock that the kernel keeps: an exclusive SQLite transaction on a file, which SQLite takes with a
 * POSIX (fcntl) lock. Every process whose kernel sees the file sees the lock, whatever container or
 * PID namespace it runs in, and the kernel drops it the moment its holder ends, kill -9 included,
 * so a crash leaves nothing to clear or to judge stale. (Why not a pid: docs/architecture.md, crash
 * safety.)
 *
 * The lock's file, empty, stays once made: removing it on release would let a process that opened
 * it just before lock the removed file while the next one locks a new file of the same name.
 *
 * Unless told not to, its holder leaves a note beside it (`<lock>.holder`: pid, host, subcommand,
 * since) so that a refusal can say who holds it; the note is for people, the lock alone decides.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { nativeModuleError } from '../runtime/native-module-error.ts';

export interface HeldKernelLock {
  /** Gives the lock back (its note first); a second call does nothing. */
  release(): Promise<void>;
}

interface HolderNote {
  pid: number;
  host: string;
  /** `ceremony <subcommand>` of the holder, or undefined when it was not started as the CLI. */
  command?: string;
  since: string;
}

const holderNotePath = (lockPath: string) => `${lockPath}.holder`;

/** The CLI's subcommand only: a refusal may reach the console, and arguments name paths. */
function cliCommand(): string | undefined {
  const subcommand = process.argv[2];
  return subcommand !== undefined && /^[a-z][a-z-]{0,30}$/.test(subcommand) ? `ceremony ${subcommand}` : undefined;
}

/** A connection holding the lock, or undefined while another holds it. */
function openLocked(lockPath: string): Database.Database | undefined {
  mkdirSync(path.dirname(lockPath), { recursive: true });
  let db: Database.Database | undefined;
  try {
    // timeout 0: a held lock answers at once rather than after better-sqlite3's 5 s of retries.
    db = new Database(lockPath, { timeout: 0 });
    // The journal in memory and no write: the file stays empty, and no `-journal` file is made
    // beside it (DELETE mode makes one at BEGIN EXCLUSIVE, left by a holder killed).
    db.pragma('journal_mode = MEMORY');
    db.exec('BEGIN EXCLUSIVE');
    return db;
  } catch (error) {
    db?.close();
    const code = (error as { code?: string }).code;
    if (code === 'SQLITE_BUSY') return undefined;
    // SQLite itself did not load (built for another Node): nothing to say about the folder or its filesystem.
    const native = nativeModuleError(error);
    if (native) throw native;
    const name = path.basename(lockPath);
    // A lock's file is empty: anything else was put there by hand (or is not ours).
    if (code === 'SQLITE_NOTADB')
      throw new Error(`${name} is not an empty lock file: remove it once no ceremony process runs`, { cause: error });
    // A folder this user may not write, or a filesystem without POSIX locks (some network mounts).
    throw new Error(
      `cannot take the lock ${name} (${code ?? String(error)}): its folder must be writable and on a ` +
        'filesystem with POSIX locks (a local disk, a Docker volume, NFS with its lock service)',
      { cause: error },
    );
  }
}

/**
 * The lock for this process, with its note written unless `note` is false (a lock nobody is told
 * about, such as a work folder's owner's); undefined while another holds it.
 */
export async function tryKernelLock(
  lockPath: string,
  options: { note?: boolean } = {},
): Promise<HeldKernelLock | undefined> {
  const db = openLocked(lockPath);
  if (!db) return undefined;
  let released: Promise<void> | undefined;
  const release = () =>
    (released ??= (async () => {
      // The note first: once the lock is free, the next holder writes its own.
      await rm(holderNotePath(lockPath), { force: true }).catch(() => undefined);
      db.exec('ROLLBACK');
      db.close();
    })());
  if (options.note === false) return { release };
  try {
    const note: HolderNote = {
      pid: process.pid,
      host: hostname(),
      command: cliCommand(),
      since: new Date().toISOString(),
    };
    await writeFileAtomic(holderNotePath(lockPath), `${JSON.stringify(note)}\n`);
  } catch (error) {
    await release();
    throw error;
  }
  return { release };
}

/**
 * Who holds the lock, in words for a refusal, from its note: `` (`ceremony finalise`, pid 1 on host
 * h, since …)``, or '' when there is no note (the holder has just taken the lock, or it is being
 * replaced).
 */
export function describeKernelLockHolder(lockPath: string): string {
  try {
    const note = JSON.parse(readFileSync(holderNotePath(lockPath), 'utf8')) as Partial<HolderNote>;
    if (typeof note.pid !== 'number' || typeof note.host !== 'string' || typeof note.since !== 'string') return '';
    const command = typeof note.command === 'string' ? `\`${note.command}\`, ` : '';
    return ` (${command}pid ${note.pid} on host ${note.host}, since ${note.since})`;
  } catch {
    return '';
  }
}
