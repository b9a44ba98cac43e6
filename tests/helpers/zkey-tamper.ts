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

/** A binfile (zkey, skeleton) as its 12-byte head and its sections in file order, to edit whole sections. */
export interface SectionedFile {
  head: Buffer;
  sections: Array<{ id: number; data: Buffer }>;
}

export function splitSections(file: Buffer): SectionedFile {
  const sections: SectionedFile['sections'] = [];
  let at = 12;
  for (let i = 0; i < file.readUInt32LE(8); i++) {
    const id = file.readUInt32LE(at);
    const size = Number(file.readBigUInt64LE(at + 4));
    sections.push({ id, data: file.subarray(at + 12, at + 12 + size) });
    at += 12 + size;
  }
  return { head: file.subarray(0, 12), sections };
}

function joinSections(file: SectionedFile): Buffer {
  const parts = [file.head];
  for (const { id, data } of file.sections) {
    const entry = Buffer.alloc(12);
    entry.writeUInt32LE(id, 0);
    entry.writeBigUInt64LE(BigInt(data.length), 4);
    parts.push(entry, data);
  }
  return Buffer.concat(parts);
}

/** A copy of `file` with `change` applied to a deep copy of its sections. */
export function editSections(file: Buffer, change: (copy: SectionedFile) => void): Buffer {
  const parsed = splitSections(file);
  const copy = { head: parsed.head, sections: parsed.sections.map((s) => ({ id: s.id, data: Buffer.from(s.data) })) };
  change(copy);
  return joinSections(copy);
}

/** The section `id` of a split file. */
export function sectionOf(file: SectionedFile, id: number): { id: number; data: Buffer } {
  const section = file.sections.find((s) => s.id === id);
  if (!section) throw new Error(`no section ${id}`);
  return section;
}

/**
 * A delta in `zkey-delta-v2`'s order (its record before L and H), from one in any order: what a
 * contribution made with snarkjs or contributeFast on a skeleton (ascending ids, v1) becomes when
 * a streaming client sends it.
 */
export function inDeltaV2Order(delta: Buffer): Buffer {
  return editSections(delta, (f) => {
    const points = f.sections.filter((s) => s.id === SECTION.l || s.id === SECTION.h).sort((a, b) => a.id - b.id);
    f.sections = [...f.sections.filter((s) => !points.includes(s)).sort((a, b) => a.id - b.id), ...points];
  });
}

/**
 * A zkey's first 8 bytes (magic, version), then empty sections with ids 1, 2, … and nothing else, as
 * long as `like` or up to 11 bytes more: the review's upload, a well-formed sectioned file of
 * thousands of sections, which must be refused by its count before any per-section work.
 */
export function emptySections(like: Buffer): Buffer {
  const declared = Math.ceil((like.length - 12) / 12);
  const bytes = Buffer.alloc(12 + 12 * declared);
  like.copy(bytes, 0, 0, 8);
  bytes.writeUInt32LE(declared, 8);
  for (let i = 0; i < declared; i++) bytes.writeUInt32LE(i + 1, 12 + 12 * i);
  return bytes;
}
