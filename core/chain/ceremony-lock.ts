/**
 * One writer at a time per data folder: a lock file created exclusively, holding the owner's pid.
 * A lock left by a process that died (kill -9) is recognised as stale and taken over.
 */
import { open, readFile, rm, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { CoordinatorError } from '../errors.ts';

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

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

export async function withCeremonyLock<T>(lockPath: string, work: () => Promise<T>): Promise<T> {
  await mkdir(path.dirname(lockPath), { recursive: true });
  if (!(await tryAcquire(lockPath))) {
    const owner = Number.parseInt(await readFile(lockPath, 'utf8').catch(() => ''), 10);
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && processIsAlive(owner)) {
      throw new CoordinatorError('ceremony.locked', `another ceremony process (pid ${owner}) is changing this data folder; try again when it is done`);
    }
    await rm(lockPath, { force: true });
    if (!(await tryAcquire(lockPath))) {
      throw new CoordinatorError('ceremony.locked', 'another ceremony process took the data folder lock at the same moment; try again');
    }
  }
  try {
    return await work();
  } finally {
    await rm(lockPath, { force: true });
  }
}
