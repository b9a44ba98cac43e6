/**
 * The end of a test file that made temporary folders or used the curve in its own process:
 * `after(() => cleanUp(dataDir, scratch))`. The curve's worker threads are stopped first
 * (ffjavascript's threads keep a process alive, so a file that skips this never exits), then each
 * folder is removed; an undefined one (a `before` that failed early) is skipped.
 * Coordinators and workers stop with their own `close()`/`stop()` (tests/helpers/test-coordinator.ts,
 * tests/helpers/worker-process.ts), before this runs.
 */
import { rm } from 'node:fs/promises';
import { releaseBn128 } from '../../core/crypto/bn128.ts';

export async function cleanUp(...folders: Array<string | undefined>): Promise<void> {
  await releaseBn128();
  for (const folder of folders) if (folder !== undefined) await rm(folder, { recursive: true, force: true });
}
