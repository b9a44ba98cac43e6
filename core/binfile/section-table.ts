/**
 * The section table of a snarkjs binary file (zkey, ptau, r1cs, wtns all share it: iden3's
 * binfileutils): 4 magic bytes, u32 version, u32 section count, then per section u32 id, u64 size
 * and the data. Read here once for every format, without reading any section's data; what a given
 * format requires beyond it (how many sections, which ids) its own reader checks.
 */
import type { FileHandle } from 'node:fs/promises';
import { readExactly } from './read-exactly.ts';

export interface SectionLocation {
  /** Where the section's data starts in the file. */
  offset: number;
  size: number;
}

export interface SectionTable {
  version: number;
  /** Number of sections the file declares (equal to `sections.size`: an id may not appear twice). */
  count: number;
  sections: Map<number, SectionLocation>;
  /** Where the last section ends; a well-formed file ends there too. */
  end: number;
}

/** What is wrong with a file's header or section table; the message names no file. */
export class SectionTableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SectionTableError';
  }
}

const HEAD_BYTES = 12;
const ENTRY_BYTES = 12;

/**
 * Reads the header and the section table of the file behind `handle` (`fileSize` bytes long),
 * which must start with `magic`. Checks that every section lies within the file and that no id
 * appears twice; `expectedCount`, when given, is the exact number of sections the format has. The
 * count is checked (against `expectedCount`, and against what the file can hold) before any entry
 * is read: one read of 12 bytes per entry follows, so the caller that knows the count bounds it.
 */
export async function readSectionTable(
  handle: FileHandle,
  fileSize: number,
  magic: string,
  expectedCount?: number,
): Promise<SectionTable> {
  if (fileSize < HEAD_BYTES) throw new SectionTableError(`file is too short to hold a ${magic} header`);
  const head = await readExactly(handle, 0, HEAD_BYTES);
  if (head.toString('latin1', 0, 4) !== magic) throw new SectionTableError(`missing "${magic}" magic bytes`);
  const version = head.readUInt32LE(4);
  const count = head.readUInt32LE(8);
  if (expectedCount !== undefined && count !== expectedCount) {
    throw new SectionTableError(`expected ${expectedCount} sections, found ${count}`);
  }
  // Refused before any entry is read: a count no file of this size can hold.
  if (HEAD_BYTES + count * ENTRY_BYTES > fileSize)
    throw new SectionTableError(`truncated in the section table: ${count} sections cannot fit in ${fileSize} bytes`);
  const sections = new Map<number, SectionLocation>();
  let position = HEAD_BYTES;
  for (let i = 0; i < count; i++) {
    if (position + ENTRY_BYTES > fileSize) throw new SectionTableError('truncated in the section table');
    const entry = await readExactly(handle, position, ENTRY_BYTES);
    const id = entry.readUInt32LE(0);
    const size = Number(entry.readBigUInt64LE(4));
    position += ENTRY_BYTES;
    if (sections.has(id)) throw new SectionTableError(`section ${id} appears twice`);
    if (position + size > fileSize)
      throw new SectionTableError(`truncated: section ${id} runs past the end of the file`);
    sections.set(id, { offset: position, size });
    position += size;
  }
  return { version, count, sections, end: position };
}
