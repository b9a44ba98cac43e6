/**
 * One writer at a time per data folder: a lock file created exclusively, holding the owner's pid,
 * for other processes; a queue for the callers of this one. A lock left by a process that died
 * (kill -9) is recognised as stale and taken over.
 */
import { open, readFile, rm, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { CoordinatorError } from '../errors.ts';
import { processIsAlive } from '../runtime/process-alive.ts';

async function tryAcquire(lockPath: string): Promise<boolean> {
  try {
    const handle = await open(lockPath, 'wx');
    await handle.writeFile(String(process.pid));
    await handle.close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
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
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  // Never rejects: each link waits for the previous caller's release, not for its work.
  const turn = previous.then(() => done);
  queues.set(key, turn);
  await previous;
  try {
    return await withFileLock(lockPath, work);
  } finally {
    release();
    if (queues.get(key) === turn) queues.delete(key);
  }
}

async function withFileLock<T>(lockPath: string, work: () => Promise<T>): Promise<T> {
  await mkdir(path.dirname(lockPath), { recursive: true });
  if (!(await tryAcquire(lockPath))) {
    const owner = Number.parseInt(await readFile(lockPath, 'utf8').catch(() => ''), 10);
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && processIsAlive(owner)) {
      throw new CoordinatorError(
        'ceremony.locked',
        `another ceremony process (pid ${owner}) is changing this data folder; try again when it is done`,
      );
    }
    await rm(lockPath, { force: true });
    if (!(await tryAcquire(lockPath))) {
      throw new CoordinatorError(
        'ceremony.locked',
        'another ceremony process took the data folder lock at the same moment; try again',
      );
    }
  }
  try {
    return await work();
  } finally {
    await rm(lockPath, { force: true });
  }
}
