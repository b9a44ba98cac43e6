/**
 * Work folders named after the process that made them (`<prefix><pid>-<random>`): one that a
 * process killed mid-work (SIGKILL, Ctrl-C, a crash, a reboot) left can be told from one a live
 * process still uses, and removed by the next run. What they hold can be large (a contributor's
 * keys, a whole publication being staged), so nothing else would ever remove them.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { processIsAlive } from '../runtime/process-alive.ts';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A new work folder in `dir`, named `<prefix><this pid>-<random>`. */
export function makeOwnedWorkFolder(dir: string, prefix: string): Promise<string> {
  return mkdtemp(path.join(dir, `${prefix}${process.pid}-`));
}

/**
 * Removes the folders in `dir` named `<prefix><pid>-…` whose process no longer runs (this
 * process's own are kept). Best effort: one this user may not remove (a shared /tmp) is left
 * without failing the run. Returns how many it removed.
 */
export async function removeDeadOwnersFolders(dir: string, prefix: string): Promise<number> {
  const owned = new RegExp(`^${escapeRegExp(prefix)}(\\d+)-`);
  let removed = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const pid = owned.exec(name)?.[1];
    if (pid === undefined || processIsAlive(Number(pid))) continue;
    const gone = await rm(path.join(dir, name), { recursive: true, force: true }).then(
      () => true,
      () => false,
    );
    if (gone) removed++;
  }
  return removed;
}
