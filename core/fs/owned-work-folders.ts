/**
 * Work folders that a process killed mid-work (SIGKILL, Ctrl-C, a crash, a reboot) leaves are told
 * from those a live process still uses, and removed by the next run. What they hold can be large
 * (a contributor's keys, a whole publication being staged), so nothing else would ever remove them.
 *
 * A folder `<prefix><pid>-<random>` has an owner's lock beside it, `<folder>.owner`: the kernel's
 * (kernel-lock.ts), held by its process until `done()` or its end: whoever gets that lock finds the
 * owner gone, whatever its pid or container. The lock is beside the folder, not in it, because a
 * publication's staging folder becomes the publication.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { tryKernelLock, type HeldKernelLock } from '../data-folder/kernel-lock.ts';

const OWNER_SUFFIX = '.owner';

export interface OwnedWorkFolder {
  path: string;
  /** Removes the folder (if it is still there: a publish renamed it) and the owner's lock. */
  done(): Promise<void>;
  /** The same, synchronously, for an `exit` handler; the lock goes with the process. */
  doneSync(): void;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Names tried for a new work folder. Another process's sweep (removeDeadOwnersFolders) can find a
 * new owner's lock file between its creation and its owner locking it, take it and remove it: that
 * name is lost, and the next, made after that sweep read the folder, is not in its list.
 */
const NEW_FOLDER_ATTEMPTS = 8;

/**
 * A new work folder in `dir`, named `<prefix><this pid>-<random>` (`random` for a test: the
 * suffix of each name tried), its owner's lock held first.
 */
export async function makeOwnedWorkFolder(
  dir: string,
  prefix: string,
  random: () => string = () => randomBytes(6).toString('hex'),
): Promise<OwnedWorkFolder> {
  let folder = '';
  let lock: HeldKernelLock | undefined;
  for (let attempt = 0; attempt < NEW_FOLDER_ATTEMPTS && !lock; attempt++) {
    folder = path.join(dir, `${prefix}${process.pid}-${random()}`);
    // The lock before the folder: a sweep never sees a folder of a live owner unlocked.
    lock = await tryKernelLock(`${folder}${OWNER_SUFFIX}`, { note: false });
  }
  if (!lock) throw new Error(`the owner's lock of a new work folder was taken ${NEW_FOLDER_ATTEMPTS} times: ${folder}`);
  try {
    await mkdir(folder);
  } catch (error) {
    await removeOwnerLock(folder, lock);
    throw error;
  }
  let finished: Promise<void> | undefined;
  return {
    path: folder,
    done: () =>
      (finished ??= (async () => {
        await rm(folder, { recursive: true, force: true });
        await removeOwnerLock(folder, lock);
      })()),
    doneSync: () => {
      rmSync(folder, { recursive: true, force: true });
      rmSync(`${folder}${OWNER_SUFFIX}`, { force: true });
    },
  };
}

/** The lock's file goes while it is held (its name is this folder's alone), then the lock. */
async function removeOwnerLock(folder: string, lock: HeldKernelLock): Promise<void> {
  await rm(`${folder}${OWNER_SUFFIX}`, { force: true });
  await lock.release();
}

/**
 * Removes the folders in `dir` named `<prefix><pid>-…` whose owner's lock nobody holds, with
 * that lock (one left without its folder too). Best effort: one this user may not remove (a shared
 * /tmp) is left without failing the run. Returns how many folders it removed.
 */
export async function removeDeadOwnersFolders(dir: string, prefix: string): Promise<number> {
  const owned = new RegExp(`^${escapeRegExp(prefix)}\\d+-[^.]+$`);
  const names = await readdir(dir).catch(() => [] as string[]);
  const folders = new Set<string>();
  for (const name of names) {
    const base = name.endsWith(OWNER_SUFFIX) ? name.slice(0, -OWNER_SUFFIX.length) : name;
    if (owned.test(base)) folders.add(base);
  }
  let removed = 0;
  for (const name of folders) {
    const folder = path.join(dir, name);
    const lock = await tryKernelLock(`${folder}${OWNER_SUFFIX}`, { note: false }).catch(() => undefined);
    if (!lock) continue; // its owner runs (or the lock cannot be made here: leave it)
    const wasFolder = await stat(folder).then(
      (stats) => stats.isDirectory(),
      () => false,
    );
    const gone = await rm(folder, { recursive: true, force: true }).then(
      () => true,
      () => false,
    );
    await removeOwnerLock(folder, lock).catch(() => undefined);
    if (gone && wasFolder) removed++;
  }
  return removed;
}
