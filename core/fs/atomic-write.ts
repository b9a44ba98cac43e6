/**
 * Crash-safe file writes: everything the ceremony keeps is written to a temporary name in the
 * same folder, flushed to disk, then renamed over the target, and the folder itself is flushed.
 * A crash at any moment leaves either the old file or the new one, never a torn one.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, rm, mkdir } from 'node:fs/promises';
import path from 'node:path';

const TEMP_SUFFIX = '.tmp';

/** A fresh temporary path beside `target`, recognisable (and removable) after a crash. */
export function tempPathFor(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
}

export function isTempPath(fileName: string): boolean {
  return fileName.startsWith('.') && fileName.endsWith(TEMP_SUFFIX);
}

async function fsyncPath(target: string, flags: 'r' | 'r+' = 'r'): Promise<void> {
  const handle = await open(target, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Flushes a directory entry so a rename inside it survives a power loss. */
export async function fsyncDirectory(dir: string): Promise<void> {
  await fsyncPath(dir);
}

/** Flushes `source` and renames it over `target` atomically. */
export async function commitFile(source: string, target: string): Promise<void> {
  await fsyncPath(source, 'r+');
  await rename(source, target);
  await fsyncDirectory(path.dirname(target));
}

/** Writes `contents` to `target` through a temporary file and an atomic rename. */
export async function writeFileAtomic(target: string, contents: string | Uint8Array): Promise<void> {
  await mkdir(path.dirname(target), { recursive: true });
  const temp = tempPathFor(target);
  try {
    const handle = await open(temp, 'wx');
    try {
      await handle.writeFile(contents);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
    await fsyncDirectory(path.dirname(target));
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
