/**
 * Runs a test's body with node:worker_threads' `Worker` replaced (one that cannot start, one whose
 * thread dies, one that counts), then puts the real one back. Modules import `Worker` by name; the
 * builtin's named export follows its default object once `syncBuiltinESMExports` is called.
 */
import { syncBuiltinESMExports } from 'node:module';
import workerThreads from 'node:worker_threads';

export const RealWorker = workerThreads.Worker;

export async function withWorkerClass<T>(replacement: typeof RealWorker, body: () => Promise<T>): Promise<T> {
  workerThreads.Worker = replacement;
  syncBuiltinESMExports();
  try {
    return await body();
  } finally {
    workerThreads.Worker = RealWorker;
    syncBuiltinESMExports();
  }
}
