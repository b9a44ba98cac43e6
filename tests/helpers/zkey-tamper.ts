/** Builds tampered copies of zkeys for refusal tests: byte-level edits at known section offsets. */
import { copyFile, open, readFile, writeFile } from 'node:fs/promises';
import { readZkeyInfo, SECTION } from '../../core/zkey/zkey-file.ts';

export const G1 = 64;

/** Copies `source` to `target` and lets `edit` change bytes of the copy in place. */
export async function tamperedCopy(
  source: string,
  target: string,
  edit: (bytes: Buffer, info: Awaited<ReturnType<typeof readZkeyInfo>>) => void,
): Promise<string> {
  const info = await readZkeyInfo(source);
  const bytes = await readFile(source);
  edit(bytes, info);
  await writeFile(target, bytes);
  return target;
}

export function sectionOffset(info: Awaited<ReturnType<typeof readZkeyInfo>>, id: number): number {
  return info.sections.get(id)!.offset;
}

/** Offset of the n-th (0-based) contribution record inside the file. */
export function recordOffset(info: Awaited<ReturnType<typeof readZkeyInfo>>, n: number): number {
  let offset = sectionOffset(info, SECTION.mpc) + 64 + 4;
  for (let i = 0; i < n; i++) offset += info.mpc.contributions[i]!.raw.length;
  return offset;
}

export async function truncatedCopy(source: string, target: string, dropBytes: number): Promise<string> {
  await copyFile(source, target);
  const handle = await open(target, 'r+');
  const { size } = await handle.stat();
  await handle.truncate(size - dropBytes);
  await handle.close();
  return target;
}
