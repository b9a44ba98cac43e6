/**
 * One writer at a time per data folder: a lock file holding the owner's pid, for other processes;
 * a queue for the callers of this one. The file is made by linking a complete, flushed file to its
 * name (writeFileAtomic's keepExisting); a lock left by a process that died (kill -9) is removed only
 * by the holder of its takeover token (`<lock>.takeover`, made the same way), so of processes
 * finding it at once exactly one gets in (why: docs/architecture.md, crash safety).
 */
import { readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoordinatorError } from '../errors.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { processIsAlive } from '../runtime/process-alive.ts';

/** How long a lock file may stay empty or unreadable before it is taken for a crashed writer's. */
const UNREADABLE_GRACE_MS = 60_000;
/** Rounds of acquire → stale → take over before giving up (each lost to another process's takeover). */
const ACQUIRE_ATTEMPTS = 8;
/** Tokens of tokens followed when their holders died too. */
const TAKEOVER_DEPTH = 3;

interface Holder {
  /** Undefined when the file holds no pid (empty, or not a number). */
  pid: number | undefined;
  mtimeMs: number;
}

/** Creates `file` with this process's pid unless it exists; false if it does. */
function tryCreate(file: string): Promise<boolean> {
  return writeFileAtomic(file, String(process.pid), { keepExisting: true });
}

async function readHolder(file: string): Promise<Holder | undefined> {
  try {
    const [content, stats] = await Promise.all([readFile(file, 'utf8'), stat(file)]);
    const pid = /^\d+$/.test(content.trim()) ? Number(content.trim()) : undefined;
    return { pid: pid !== undefined && pid > 0 ? pid : undefined, mtimeMs: stats.mtimeMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * A lock or token whose owner is gone. This process's own pid counts as gone: the queue below lets
 * one caller of this process at a time near the file, so no caller here holds it.
 */
function isStale(holder: Holder): boolean {
  if (holder.pid === undefined) return Date.now() - holder.mtimeMs > UNREADABLE_GRACE_MS;
  return holder.pid === process.pid || !processIsAlive(holder.pid);
}

/**
 * Removes `file` if it is (still) stale, holding its takeover token. False when another process
 * holds the token (a token left by a dead one is cleared for the next try).
 */
async function removeIfStale(file: string, depth = 0): Promise<boolean> {
  const token = `${file}.takeover`;
  if (!(await tryCreate(token))) {
    const tokenHolder = await readHolder(token);
    if (tokenHolder && isStale(tokenHolder) && depth < TAKEOVER_DEPTH) await removeIfStale(token, depth + 1);
    return false;
  }
  try {
    const holder = await readHolder(file);
    if (holder && isStale(holder)) await rm(file, { force: true });
    return true;
  } finally {
    await rm(token, { force: true });
  }
}

async function acquire(lockPath: string): Promise<void> {
  for (let attempt = 0; attempt < ACQUIRE_ATTEMPTS; attempt++) {
    if (await tryCreate(lockPath)) return;
    const holder = await readHolder(lockPath);
    if (holder === undefined) continue; // released in between
    if (!isStale(holder)) {
      throw new CoordinatorError(
        'ceremony.locked',
        holder.pid === undefined
          ? 'another ceremony process is taking the data folder lock; try again'
          : `another ceremony process (pid ${holder.pid}) is changing this data folder; try again when it is done`,
      );
    }
    // Another process taking it over at this moment: give it time to finish.
    if (!(await removeIfStale(lockPath))) await sleep(5 + Math.random() * 20);
  }
  throw new CoordinatorError(
    'ceremony.locked',
    'another ceremony process took the data folder lock at the same moment; try again',
  );
}

/** Removes the lock if it is still this process's (it always is, unless someone deleted it by hand). */
async function release(lockPath: string): Promise<void> {
  const holder = await readHolder(lockPath).catch(() => undefined);
  if (holder?.pid === process.pid) await rm(lockPath, { force: true });
}

/**
 * The callers of this process, queued per lock file. The file keeps other processes out, but it
 * holds a pid, and a second caller of the same process would take the lock for stale (its pid is
 * not another live process) and run beside the first: two commits of one coordinator, each
 * rewriting the transcript from the state it read, would lose one link. So callers of one process
 * take turns here first; a lock file with this pid that nobody here holds is then truly stale
 * (left by an earlier process that had the same pid).
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
    await acquire(lockPath);
    try {
      return await work();
    } finally {
      await release(lockPath);
    }
  } finally {
    done();
    if (queues.get(key) === turn) queues.delete(key);
  }
}
