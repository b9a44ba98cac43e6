/**
 * New files written whole and flushed before they count: what publish and backup put in their
 * staging folders. Each target is created exclusively ('wx'), so a name written twice is a bug
 * caught at once rather than a file silently replaced; the folder's rename makes them visible.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';

/** Writes `contents` to the new file `target` and flushes it. */
export async function writeNewFlushed(target: string, contents: string, mode = 0o644): Promise<void> {
  const handle = await open(target, 'wx', mode);
  try {
    await handle.writeFile(contents);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Copies `source` to the new file `target` in 1 MiB chunks and flushes it, handing each chunk to
 * `onChunk` (hashes, progress) after it is written.
 */
export async function copyNewFlushed(
  source: string,
  target: string,
  onChunk: (chunk: Buffer) => void,
  mode = 0o644,
): Promise<void> {
  const handle = await open(target, 'wx', mode);
  try {
    for await (const chunk of createReadStream(source, { highWaterMark: 1 << 20 })) {
      const buffer = chunk as Buffer;
      await handle.write(buffer);
      onChunk(buffer);
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
}
