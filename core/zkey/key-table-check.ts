/**
 * The first check of an uploaded whole key, made before any byte of it is hashed or verified: its
 * section table must be the one a contribution on the head has. A contribution keeps every section
 * of the head at its size but the history (section 10), which grows by one record, and snarkjs
 * writes its sections in ascending order: so the candidate has the head's version, the head's ten
 * ids, each once and in ascending order, sections 1 to 9 at the head's sizes, section 10 at most
 * NEXT_RECORD_MAX_BYTES longer than the head's, and nothing after it. Section 1 (the protocol, 4
 * bytes) must be the head's too.
 *
 * Work is bounded by the head, never by what the candidate declares: its count is compared with
 * the head's before any entry is read, then at most that many 12-byte entries are read, each
 * refused as soon as it differs. The rules are one TableExpectation (wholeKeyExpectation), which
 * the coordinator also holds an upload to while it arrives (server/files/upload-table-check.ts).
 * Every refusal is a verdict (`zkey.malformed` for a file that is not a sectioned zkey at all,
 * `zkey.section_table_mismatch` for one whose table is not the head's), and its message holds only
 * numbers and fixed words, never the candidate's bytes.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { CoordinatorError } from '../errors.ts';
import { readExactly } from '../binfile/read-exactly.ts';
import { readSectionTable, type SectionTable } from '../binfile/section-table.ts';
import { SectionTableCursor, type TableExpectation } from '../binfile/section-table-cursor.ts';
import { SECTION } from './zkey-file.ts';

/** The largest record one contribution adds (its fixed part and a name: well under this). */
export const NEXT_RECORD_MAX_BYTES = 64 * 1024;

const MAGIC = 'zkey';

function notAZkey(label: string, why: string): CoordinatorError {
  return new CoordinatorError('zkey.malformed', `${label} is not a valid Groth16 zkey: ${why}`);
}

function notTheHeads(label: string, why: string): CoordinatorError {
  return new CoordinatorError(
    'zkey.section_table_mismatch',
    `the section table of ${label} is not the one a contribution on the chain head has: ${why}`,
  );
}

/** The refusal of a key whose section 1 (the protocol) is not the head's; `label` names it. */
export function protocolMismatch(label: string): CoordinatorError {
  return notTheHeads(label, 'its section 1 (the protocol) is not the head’s');
}

/** Where the candidate keeps its sections 2 (header) and 10 (history), once its table is the head's. */
export interface CheckedKeyTable {
  table: SectionTable;
  /** The candidate's sections 2 and 10, read (small: the header, and the history of a few hundred records). */
  header: Buffer;
  mpc: Buffer;
}

/** The head's table: a verified key, read with the shared reader (ten entries). */
export async function headTable(headPath: string): Promise<SectionTable> {
  const head = await open(headPath, 'r');
  try {
    return await readSectionTable(head, (await head.stat()).size, MAGIC, 10);
  } finally {
    await head.close();
  }
}

/**
 * The size section `id` may have in a contribution on a head whose section is `headSize` bytes: the
 * head's, but for the history, which is at most one record longer (how it extends the head's is the
 * record check's to say, with the verifier's codes: a stale key is not a malformed one).
 */
function sizeAllowed(id: number, size: bigint, headSize: number): boolean {
  if (id !== SECTION.mpc) return size === BigInt(headSize);
  return size <= BigInt(headSize + NEXT_RECORD_MAX_BYTES);
}

/**
 * What a whole key's head and table must be on the head whose table is `head` (see the module
 * comment), entry by entry, for a SectionTableCursor: at the end of an upload, or as it arrives.
 */
export function wholeKeyExpectation(head: SectionTable, label: string): TableExpectation {
  const ids = [...head.sections.keys()].sort((a, b) => a - b);
  return {
    count: head.count,
    fileHead(bytes) {
      if (bytes.toString('latin1', 0, 4) !== MAGIC) throw notAZkey(label, 'it does not start with "zkey"');
      const [version, count] = [bytes.readUInt32LE(4), bytes.readUInt32LE(8)];
      if (version !== head.version) throw notTheHeads(label, `its version is ${version}, the head's ${head.version}`);
      if (count !== head.count) throw notTheHeads(label, `it declares ${count} sections, the head has ${head.count}`);
    },
    entry(index, id, size) {
      if (id !== ids[index])
        throw notTheHeads(
          label,
          `entry ${index + 1} is section ${id}, where the head's ids in ascending order have ${ids[index]}`,
        );
      const headSize = head.sections.get(id)!.size;
      if (!sizeAllowed(id, size, headSize))
        throw notTheHeads(
          label,
          id === SECTION.mpc
            ? `section 10 is ${size} bytes, more than the head's ${headSize} plus one contribution record`
            : `section ${id} is ${size} bytes, the head's ${headSize}`,
        );
    },
    truncated({ entry, section }) {
      if (entry !== undefined) return notAZkey(label, `it is truncated inside entry ${entry + 1} of its section table`);
      if (section !== undefined) return notAZkey(label, `it is truncated inside section ${section}`);
      return notAZkey(label, 'it is too short to hold a zkey header');
    },
    end(end, fileSize) {
      if (end > fileSize) throw notAZkey(label, 'it is truncated inside section 10');
      if (end !== fileSize) throw notAZkey(label, `${fileSize - end} unexpected bytes after the last section`);
    },
  };
}

/** Reads and checks the candidate's table entry by entry against the head's (see the module comment). */
async function candidateTable(
  handle: FileHandle,
  fileSize: number,
  head: SectionTable,
  label: string,
): Promise<SectionTable> {
  const cursor = new SectionTableCursor(wholeKeyExpectation(head, label), fileSize);
  await cursor.advance(handle, fileSize);
  return { version: head.version, count: head.count, sections: cursor.sections, end: fileSize };
}

/**
 * Refuses the key at `keyPath` unless its section table is the one a contribution on the verified
 * head at `headPath` has (see the module comment), and its section 1 is the head's; resolves with
 * its table and its sections 2 and 10. `label` names the key in refusals (a role on a server).
 */
export async function checkKeyTableAgainstHead(
  headPath: string,
  keyPath: string,
  label: string,
): Promise<CheckedKeyTable> {
  const head = await headTable(headPath);
  const handle = await open(keyPath, 'r');
  try {
    const table = await candidateTable(handle, (await handle.stat()).size, head, label);
    const protocol = table.sections.get(SECTION.protocol)!;
    const headProtocol = head.sections.get(SECTION.protocol)!;
    const headFile = await open(headPath, 'r');
    try {
      const [ours, heads] = await Promise.all([
        readExactly(handle, protocol.offset, protocol.size),
        readExactly(headFile, headProtocol.offset, headProtocol.size),
      ]);
      if (!ours.equals(heads)) throw protocolMismatch(label);
    } finally {
      await headFile.close();
    }
    const at = (id: number): { offset: number; size: number } => table.sections.get(id)!;
    const [header, mpc] = await Promise.all([
      readExactly(handle, at(SECTION.grothHeader).offset, at(SECTION.grothHeader).size),
      readExactly(handle, at(SECTION.mpc).offset, at(SECTION.mpc).size),
    ]);
    return { table, header, mpc };
  } finally {
    await handle.close();
  }
}
