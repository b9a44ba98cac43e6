/**
 * One coordinator per data folder. Two serving one folder would each keep a lobby of their own:
 * each would grant the same circuit's turn (one of the two contributions then refused at its commit,
 * a contributor's laptop busy for nothing) and append to the one public queue log from its own
 * view of the queues. `ceremony serve` holds the kernel's lock on `.ceremony-serving.lock`
 * (kernel-lock.ts) for as long as it serves, and a second is refused at start-up, naming the first.
 * Commands on the data folder (`finalise`, `announce-beacon`) take the writers' lock
 * (ceremony-lock.ts), not this one: they may run beside the coordinator.
 */
import { CoordinatorError } from '../errors.ts';
import { ceremonyPaths } from './ceremony-paths.ts';
import { describeKernelLockHolder, tryKernelLock, type HeldKernelLock } from './kernel-lock.ts';

export async function takeServingLock(dataDir: string): Promise<HeldKernelLock> {
  const lockPath = ceremonyPaths(dataDir).servingLockPath;
  const lock = await tryKernelLock(lockPath);
  if (lock) return lock;
  throw new CoordinatorError(
    'ceremony.already_served',
    `another coordinator${describeKernelLockHolder(lockPath)} serves this data folder; ` +
      'stop it first, or give this one a data folder of its own',
  );
}
