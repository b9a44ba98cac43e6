/**
 * One writer at a time per data folder: the kernel's lock on `.ceremony-writer.lock`
 * (kernel-lock.ts: it holds across containers and ends with its holder), and a queue for the
 * callers of this process, who wait for each other here rather than one being refused by the lock
 * another caller of the same process holds.
 */
import path from 'node:path';
import { CoordinatorError } from '../errors.ts';
import { describeKernelLockHolder, tryKernelLock } from './kernel-lock.ts';

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
    const lock = await tryKernelLock(key);
    if (!lock) {
      throw new CoordinatorError(
        'ceremony.locked',
        `another ceremony process${describeKernelLockHolder(key)} is changing this data folder; ` +
          'try again when it is done',
      );
    }
    try {
      return await work();
    } finally {
      await lock.release();
    }
  } finally {
    done();
    if (queues.get(key) === turn) queues.delete(key);
  }
}
