/**
 * A binfile's section table read as far as the bytes at hand allow, and from there on as more
 * arrive: an upload's table is checked while the upload is still coming in, entry by entry, so
 * one that cannot be what the format expects is refused at the request that brought the entry
 * rather than once every byte was received. What is expected is the caller's (TableExpectation:
 * a whole key's table on its head, a delta's); the cursor reads only the 12-byte file head and the
 * 12-byte entries, at the positions the sizes already read put them, never a section's body, and
 * never more entries than the expectation's count, whatever the file declares.
 */
import type { FileHandle } from 'node:fs/promises';
import { readExactly } from './read-exactly.ts';
import type { SectionLocation } from './section-table.ts';

const HEAD_BYTES = 12;
const ENTRY_BYTES = 12;

/** What a format expects of a file's head and table; each check throws the format's own refusal. */
export interface TableExpectation {
  /** The file's first 12 bytes: magic, version, section count. */
  fileHead(bytes: Buffer): void;
  /** The entries to read once the file head passed (the count it was held to). */
  readonly count: number;
  /** Entry `index` (from 0), before the next is read. */
  entry(index: number, id: number, size: bigint): void;
  /** The file ends (`fileSize`) where the table says it cannot: in its head, in an entry, in a section. */
  truncated(where: { entry?: number; section?: number }): Error;
  /** Every entry read: the last section ends at `end`, in a file of `fileSize` bytes. */
  end(end: number, fileSize: number): void;
}

export class SectionTableCursor {
  private position = 0;
  private index = 0;
  private finished = false;
  /** The sections read so far, by id, where their bodies start. */
  readonly sections = new Map<number, SectionLocation>();

  /** `fileSize`: the file's length once complete (an upload's declared length). */
  constructor(
    private readonly expected: TableExpectation,
    private readonly fileSize: number,
  ) {}

  /** True once every entry was read and the end checked. */
  get done(): boolean {
    return this.finished;
  }

  /**
   * Checks what the first `available` bytes of the file behind `handle` hold of the table and was
   * not checked yet; throws the expectation's refusal. Call again as more bytes are available.
   */
  async advance(handle: FileHandle, available: number): Promise<void> {
    if (this.finished) return;
    if (this.position === 0) {
      if (this.fileSize < HEAD_BYTES) throw this.expected.truncated({});
      if (available < HEAD_BYTES) return;
      this.expected.fileHead(await readExactly(handle, 0, HEAD_BYTES));
      this.position = HEAD_BYTES;
    }
    while (this.index < this.expected.count) {
      if (this.position + ENTRY_BYTES > this.fileSize) throw this.expected.truncated({ entry: this.index });
      if (this.position + ENTRY_BYTES > available) return;
      const entry = await readExactly(handle, this.position, ENTRY_BYTES);
      const id = entry.readUInt32LE(0);
      const size = entry.readBigUInt64LE(4);
      this.expected.entry(this.index, id, size);
      this.position += ENTRY_BYTES;
      this.sections.set(id, { offset: this.position, size: Number(size) });
      this.position += Number(size);
      this.index++;
      if (this.position > this.fileSize) throw this.expected.truncated({ section: id });
    }
    this.expected.end(this.position, this.fileSize);
    this.finished = true;
  }
}
