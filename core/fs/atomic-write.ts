/**
 * Crash-safe file writes: everything the ceremony keeps is written to a temporary name in the
 * same folder, flushed to disk, then renamed over the target, and the folder itself is flushed.
 * A crash at any moment leaves either the old file or the new one, never a torn one. Folders are
 * made with makeDirectory, which flushes the entry of each one it creates in its parent.
 */
import { randomBytes } from 'node:crypto';
import { link, open, readdir, rename, rm, mkdir } from 'node:fs/promises';
import path from 'node:path';

const TEMP_SUFFIX = '.tmp';

/** A fresh temporary path beside `target`, recognisable (and removable) after a crash. */
export function tempPathFor(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
}

export function isTempPath(fileName: string): boolean {
  return fileName.startsWith('.') && fileName.endsWith(TEMP_SUFFIX);
}

/**
 * Removes the temporary files a writer killed mid-write left in `dir`, and with `recursive` in
 * every folder below it (a staged key can be gigabytes). Only where no other writer can be at
 * work: under the ceremony lock in a folder only the lock's holder writes, or a folder one command
 * owns (a fetch's DIR). Returns how many it removed.
 */
export async function removeTempLeftovers(dir: string, options: { recursive?: boolean } = {}): Promise<number> {
  const entries = await readdir(dir, { recursive: options.recursive === true, withFileTypes: true }).catch(() => []);
  const leftovers = entries.filter((entry) => entry.isFile() && isTempPath(entry.name));
  await Promise.all(leftovers.map((entry) => rm(path.join(entry.parentPath, entry.name), { force: true })));
  return leftovers.length;
}

async function fsyncPath(target: string, flags: 'r' | 'r+' = 'r'): Promise<void> {
  const handle = await open(target, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Starts writing a file's dirty pages to disk now, so that its commitFile later finds little left
 * to flush: a key spliced at upload speed leaves up to gigabytes in the page cache, and the commit
 * comes right after a verification that no longer reads them. Best effort: never rejects.
 */
export async function flushAhead(target: string): Promise<void> {
  await fsyncPath(target, 'r+').catch(() => undefined);
}

/** Flushes a directory entry so a rename inside it survives a power loss. */
export async function fsyncDirectory(dir: string): Promise<void> {
  await fsyncPath(dir);
}

/**
 * `mkdir -p` whose new folders survive a power loss: flushing a folder keeps the names in it, not
 * its own name in its parent, so each parent of a folder created here is flushed too (nothing is
 * flushed when every folder was already there).
 */
export async function makeDirectory(dir: string, mode?: number): Promise<void> {
  const first = await mkdir(dir, { recursive: true, mode });
  if (first === undefined) return;
  const top = path.resolve(first);
  for (let created = path.resolve(dir); ; created = path.dirname(created)) {
    await fsyncDirectory(path.dirname(created));
    if (created === top) return;
  }
}

/** Flushes `source` and renames it over `target` atomically. */
export async function commitFile(source: string, target: string): Promise<void> {
  await fsyncPath(source, 'r+');
  await rename(source, target);
  await fsyncDirectory(path.dirname(target));
}

export interface AtomicWriteOptions {
  /** Permission bits of the file (default 0o666, less the umask); 0o600 for secrets. */
  mode?: number;
  /** Permission bits of the folders created on the way (default 0o777, less the umask). */
  directoryMode?: number;
  /**
   * Never replace an existing target: the temporary file is hard-linked to the target's name,
   * which fails if the name exists, instead of renamed over it. Several processes creating the
   * same file at once (verifiers starting together on one data folder) then agree on one content,
   * the first written; the others' is dropped. Default false: the new contents replace the old.
   */
  keepExisting?: boolean;
}

/**
 * Writes `contents` to `target` through a temporary file and an atomic rename (or link, see
 * `keepExisting`). Resolves to false only when `keepExisting` kept a file that was already there.
 */
export async function writeFileAtomic(
  target: string,
  contents: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<boolean> {
  await makeDirectory(path.dirname(target), options.directoryMode);
  const temp = tempPathFor(target);
  let written = true;
  try {
    const handle = await open(temp, 'wx', options.mode);
    try {
      await handle.writeFile(contents);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (options.keepExisting) {
      written = await link(temp, target).then(
        () => true,
        (error: NodeJS.ErrnoException) => (error.code === 'EEXIST' ? false : Promise.reject(error)),
      );
    } else {
      await rename(temp, target);
    }
    await fsyncDirectory(path.dirname(target));
  } finally {
    // After a rename there is nothing left to remove; after a link, the temporary name goes.
    await rm(temp, { force: true });
  }
  return written;
}
