/** Test helper: every regular file under a folder, as sorted '/'-separated relative paths. */
import { readdir } from 'node:fs/promises';
import path from 'node:path';

export async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
    .sort();
}
