/**
 * A contribution changes only sections 2 (δ), 8 (L), 9 (H) and 10 (the history) of a zkey; the
 * rest (IC, coefficients, A, B1, B2: most of the bytes) never changes. A "skeleton" is the zkey
 * with sections 3 to 7 kept in the section table at length 0: a valid binfile a contributor can
 * contribute on and send back (`zkey-delta-v1`, docs/contribution-delta.md). Here the skeleton is
 * written from a full key, and an uploaded skeleton is checked against the head and filled back
 * into a full key. Both stream section by section: keys are larger than memory should hold.
 */
import { open, rm, type FileHandle } from 'node:fs/promises';
import { CoordinatorError } from '../errors.ts';
import { commitFile, tempPathFor } from '../fs/atomic-write.ts';
import { readExactly, readExactlyInto } from '../binfile/read-exactly.ts';
import { readSectionTable, SectionTableError, type SectionTable } from '../binfile/section-table.ts';
import type { TableExpectation } from '../binfile/section-table-cursor.ts';
import { deltaSectionOrder, type DeltaFormat } from './delta-format.ts';

const MAGIC = 'zkey';
/** The sections a contribution never changes, left out of a skeleton. */
export const FIXED_SECTIONS = new Set([3, 4, 5, 6, 7]);
/** The sections a contribution scales point by point (L, H): the bulk of what crosses the network. */
export const STREAMED_SECTIONS = [8, 9];
const CHUNK = 1 << 20;
/** snarkjs's section 10: the 64-byte hash of the circuit, a u32 count, then the records. */
const MPC_COUNT_OFFSET = 64;

/**
 * The section table of a key or a skeleton. `expectedCount` (a delta's: the head's count) is checked
 * before any entry is read, so a declared count of millions costs one read, not millions.
 */
async function tableOf(handle: FileHandle, what: string, expectedCount?: number): Promise<SectionTable> {
  const { size } = await handle.stat();
  try {
    const table = await readSectionTable(handle, size, MAGIC, expectedCount);
    if (table.end !== size) throw new SectionTableError('bytes after the last section');
    return table;
  } catch (error) {
    if (error instanceof SectionTableError) {
      throw new CoordinatorError('delta.malformed', `${what}: ${error.message}`);
    }
    throw error;
  }
}

async function copyRange(from: FileHandle, offset: number, size: number, to: FileHandle): Promise<void> {
  const buffer = Buffer.alloc(Math.min(CHUNK, Math.max(size, 1)));
  for (let done = 0; done < size;) {
    const length = Math.min(buffer.length, size - done);
    const { bytesRead } = await from.read(buffer, 0, length, offset + done);
    if (bytesRead === 0) throw new CoordinatorError('delta.malformed', 'a section ends before its size');
    await to.write(buffer, 0, bytesRead);
    done += bytesRead;
  }
}

/** A zkey's first 12 bytes: the magic, the format version, the section count. */
export function fileHead(version: number, count: number): Buffer {
  const head = Buffer.alloc(12);
  head.write(MAGIC, 0, 'latin1');
  head.writeUInt32LE(version, 4);
  head.writeUInt32LE(count, 8);
  return head;
}

/** A section's 12-byte header: its id (u32) and size in bytes (u64), little-endian. */
export function sectionHead(id: number, size: number): Buffer {
  const entry = Buffer.alloc(12);
  entry.writeUInt32LE(id, 0);
  entry.writeBigUInt64LE(BigInt(size), 4);
  return entry;
}

/** Writes `sourceOf(id)` for each section of `order`, in that order, to `outPath` through a temporary file. */
async function writeSections(
  outPath: string,
  layout: SectionTable,
  order: number[],
  sourceOf: (id: number) => { handle: FileHandle; offset: number; size: number },
): Promise<void> {
  const temp = tempPathFor(outPath);
  const out = await open(temp, 'w');
  try {
    await out.write(fileHead(layout.version, layout.count));
    for (const id of order) {
      const source = sourceOf(id);
      await out.write(sectionHead(id, source.size));
      await copyRange(source.handle, source.offset, source.size, out);
    }
    await out.close();
    await commitFile(temp, outPath);
  } catch (error) {
    await out.close().catch(() => {});
    await rm(temp, { force: true });
    throw error;
  }
}

/** The size in bytes of the skeleton of the full key at `zkeyPath`, from its section table alone. */
export async function skeletonSize(zkeyPath: string): Promise<number> {
  const handle = await open(zkeyPath, 'r');
  try {
    const table = await tableOf(handle, 'the key');
    let size = table.end;
    for (const id of FIXED_SECTIONS) size -= table.sections.get(id)?.size ?? 0;
    return size;
  } finally {
    await handle.close();
  }
}

/**
 * The order of a skeleton as the coordinator serves it: every section in the key's order, except
 * that L (8) and H (9) come last. What a contribution must read before it can scale a single
 * point (the header, δ and the history in section 10) then arrives first, and a client can make
 * its record and start scaling L and H while they are still arriving. Any binfile reader (snarkjs
 * included) finds sections by id, so the order changes nothing else.
 */
function inputsOrder(table: SectionTable): number[] {
  const ids = [...table.sections.keys()];
  return [
    ...ids.filter((id) => !STREAMED_SECTIONS.includes(id)),
    ...STREAMED_SECTIONS.filter((id) => ids.includes(id)),
  ];
}

/** Writes the skeleton of the full key at `zkeyPath` to `outPath`, in the inputs' order. */
export async function writeSkeleton(zkeyPath: string, outPath: string): Promise<void> {
  const handle = await open(zkeyPath, 'r');
  try {
    const table = await tableOf(handle, 'the key');
    await writeSections(outPath, table, inputsOrder(table), (id) => {
      const at = table.sections.get(id)!;
      return { handle, offset: at.offset, size: FIXED_SECTIONS.has(id) ? 0 : at.size };
    });
  } finally {
    await handle.close();
  }
}

/**
 * The same bytes as `writeSkeleton` writes, as a stream read from the key as it is consumed (the
 * coordinator's own contribution, the beacon, makes its delta from it without a file between).
 * Each chunk is a fresh array: a reader may keep what it was given.
 */
export function skeletonStream(zkeyPath: string): ReadableStream<Uint8Array> {
  let handle: FileHandle | undefined;
  let pieces: Array<{ bytes: Uint8Array } | { offset: number; size: number }> = [];
  const close = async (): Promise<void> => {
    await handle?.close().catch(() => {});
    handle = undefined;
  };
  return new ReadableStream<Uint8Array>({
    async start() {
      handle = await open(zkeyPath, 'r');
      const table = await tableOf(handle, 'the key');
      pieces = [{ bytes: fileHead(table.version, table.count) }];
      for (const id of inputsOrder(table)) {
        const at = table.sections.get(id)!;
        const size = FIXED_SECTIONS.has(id) ? 0 : at.size;
        pieces.push({ bytes: sectionHead(id, size) }, { offset: at.offset, size });
      }
    },
    async pull(controller) {
      // Every pull enqueues or closes: a pull that does neither is not called again.
      while (pieces[0] && 'size' in pieces[0] && pieces[0].size === 0) pieces.shift();
      const piece = pieces[0];
      if (!piece) {
        await close();
        return controller.close();
      }
      if ('bytes' in piece) {
        pieces.shift();
        return controller.enqueue(new Uint8Array(piece.bytes));
      }
      const chunk = new Uint8Array(Math.min(CHUNK, piece.size));
      await readExactlyInto(handle!, chunk, piece.offset);
      piece.offset += chunk.length;
      piece.size -= chunk.length;
      controller.enqueue(chunk);
    },
    cancel: close,
  });
}

/** The refusal of a delta that breaks one of the rules below, naming it (only fixed words and numbers). */
export function malformed(rule: string): CoordinatorError {
  return new CoordinatorError('delta.malformed', `The contribution delta breaks a rule: ${rule}.`, { rule });
}

/**
 * Refuses a delta's section 10 unless it is the head's with exactly one contribution more: the same
 * 64-byte circuit hash, a count of one more than the head's, the head's records unchanged, then
 * the new record. A count of the head's or fewer is a delta made on an earlier head
 * (`delta.stale_head`); anything else is `delta.malformed`. Pure: both sections are in memory
 * (kilobytes: the history of a few hundred contributions).
 */
export function checkDeltaHistory(head10: Uint8Array, delta10: Uint8Array): void {
  if (head10.length < MPC_COUNT_OFFSET + 4 || delta10.length < MPC_COUNT_OFFSET + 4)
    throw malformed('section 10 is too short');
  const headCount = Buffer.from(head10.buffer, head10.byteOffset, head10.length).readUInt32LE(MPC_COUNT_OFFSET);
  const count = Buffer.from(delta10.buffer, delta10.byteOffset, delta10.length).readUInt32LE(MPC_COUNT_OFFSET);
  if (count === 0) throw malformed('section 10 adds no contribution');
  if (count <= headCount) {
    // Made on an earlier head (a skeleton downloaded before someone else's contribution landed):
    // not damage but a race, which the contributor fixes by contributing again on the new head.
    throw new CoordinatorError(
      'delta.stale_head',
      `The contribution delta was made on contribution ${count - 1}, but the head is now contribution ` +
        `${headCount}; download the head's inputs again and contribute on them.`,
      { madeOn: count - 1, head: headCount },
    );
  }
  if (count !== headCount + 1) throw malformed('section 10 must count exactly one more contribution');
  if (delta10.length <= head10.length) throw malformed('section 10 adds no contribution');
  const same = (from: number, to: number): boolean =>
    Buffer.compare(head10.subarray(from, to), delta10.subarray(from, to)) === 0;
  if (!same(0, MPC_COUNT_OFFSET) || !same(MPC_COUNT_OFFSET + 4, head10.length))
    throw malformed('section 10 changes the head’s history');
}

/**
 * What a delta's head and table must be on the head whose table is `headTable`, entry by entry, in
 * the order of `format` (the rules of checkDelta below that its table alone decides), for a
 * SectionTableCursor following an upload as it arrives: a delta that breaks one is refused at the
 * request that brought the entry, not once it is complete. `fileSize` there is the upload's
 * declared length, so sections that cannot fill it exactly are refused once the last entry is in.
 */
export function deltaExpectation(headTable: SectionTable, format: DeltaFormat): TableExpectation {
  const order = deltaSectionOrder(format, headTable.sections.keys());
  return {
    count: order.length,
    fileHead(bytes) {
      if (bytes.toString('latin1', 0, 4) !== MAGIC) throw malformed('it does not start with "zkey"');
      if (bytes.readUInt32LE(4) !== headTable.version) throw malformed('the file version differs from the head’s');
      const count = bytes.readUInt32LE(8);
      if (count !== order.length) throw malformed(`it declares ${count} sections, the head has ${order.length}`);
    },
    entry(index, id, size) {
      if (id !== order[index]) throw malformed(`its sections are not the head’s, in the order of ${format}`);
      if (FIXED_SECTIONS.has(id)) {
        if (size !== 0n) throw malformed(`section ${id} must be empty`);
      } else if (id !== 10 && size !== BigInt(headTable.sections.get(id)!.size)) {
        throw malformed(`section ${id} is not the head’s size`);
      }
    },
    truncated: () => malformed('it ends before the sections its table declares'),
    end(end, fileSize) {
      if (end !== fileSize) throw malformed(`its sections add up to ${end} bytes, the upload declares ${fileSize}`);
    },
  };
}

async function sameBytes(a: FileHandle, aAt: number, b: FileHandle, bAt: number, size: number): Promise<boolean> {
  for (let done = 0; done < size; done += CHUNK) {
    const length = Math.min(CHUNK, size - done);
    const [x, y] = await Promise.all([readExactly(a, aAt + done, length), readExactly(b, bAt + done, length)]);
    if (!x.equals(y)) return false;
  }
  return true;
}

/**
 * Refuses a skeleton that is not a contribution's skeleton on top of the head's (`delta.malformed`,
 * `delta.stale_head`), its sections in the order of its format (delta-format.ts).
 */
async function checkDelta(
  head: FileHandle,
  headTable: SectionTable,
  delta: FileHandle,
  table: SectionTable,
  format: DeltaFormat,
): Promise<void> {
  // snarkjs writes a contribution's sections in ascending order whatever the order of its input
  // (the first key of a chain lists 4 before 3), so the head's order is not the rule: its ids are.
  const expected = deltaSectionOrder(format, headTable.sections.keys());
  const ids = [...table.sections.keys()];
  if (table.version !== headTable.version) throw malformed('the file version differs from the head’s');
  if (ids.length !== expected.length || ids.some((id, i) => id !== expected[i])) {
    throw malformed(`its sections are not the head’s, in the order of ${format}`);
  }
  for (const id of FIXED_SECTIONS) {
    if (table.sections.get(id)!.size !== 0) throw malformed(`section ${id} must be empty`);
  }
  const h1 = headTable.sections.get(1)!;
  const d1 = table.sections.get(1)!;
  if (h1.size !== d1.size || !(await sameBytes(head, h1.offset, delta, d1.offset, h1.size))) {
    throw malformed('section 1 differs from the head’s');
  }
  for (const id of [2, 8, 9]) {
    if (table.sections.get(id)!.size !== headTable.sections.get(id)!.size) {
      throw malformed(`section ${id} is not the head’s size`);
    }
  }
  const h10 = headTable.sections.get(10)!;
  const d10 = table.sections.get(10)!;
  // Bounded: with every other section at the head's size, section 10 is what is left of an upload
  // no longer than the head's skeleton plus a record.
  const [head10, delta10] = await Promise.all([
    readExactly(head, h10.offset, h10.size),
    readExactly(delta, d10.offset, d10.size),
  ]);
  checkDeltaHistory(head10, delta10);
}

interface CheckedDelta {
  head: FileHandle;
  headTable: SectionTable;
  delta: FileHandle;
  table: SectionTable;
}

/** Opens both files, refuses the delta unless it fits the head (checkDelta), and runs `work` on them. */
async function withCheckedDelta<T>(
  headPath: string,
  deltaPath: string,
  format: DeltaFormat,
  work: (files: CheckedDelta) => Promise<T>,
): Promise<T> {
  const head = await open(headPath, 'r');
  try {
    const delta = await open(deltaPath, 'r');
    try {
      const headTable = await tableOf(head, 'the head');
      const table = await tableOf(delta, 'the contribution delta', headTable.count);
      await checkDelta(head, headTable, delta, table, format);
      return await work({ head, headTable, delta, table });
    } finally {
      await delta.close();
    }
  } finally {
    await head.close();
  }
}

/**
 * Refuses the skeleton at `deltaPath` unless it is a contribution's skeleton on top of the head at
 * `headPath` in the order of `format` (`delta.malformed`, `delta.stale_head`): the checks
 * spliceSkeleton makes first. Resolves with the delta's sections 2 (header, δ) and 10 (history),
 * what the check of its new record (check-delta-record.ts) reads.
 */
export async function checkSkeletonAgainstHead(
  headPath: string,
  deltaPath: string,
  format: DeltaFormat,
): Promise<{ header: Buffer; mpc: Buffer }> {
  return withCheckedDelta(headPath, deltaPath, format, async ({ delta, table }) => {
    const [header, mpc] = [table.sections.get(2)!, table.sections.get(10)!];
    return {
      header: await readExactly(delta, header.offset, header.size),
      mpc: await readExactly(delta, mpc.offset, mpc.size),
    };
  });
}

/**
 * Checks the skeleton at `deltaPath` against the head at `headPath` and writes the full key (the
 * skeleton with sections 3 to 7 taken from the head) to `outPath`, crash-safely, its sections in
 * ascending order as snarkjs writes a contribution, whatever the delta's order.
 */
export async function spliceSkeleton(
  headPath: string,
  deltaPath: string,
  outPath: string,
  format: DeltaFormat,
): Promise<void> {
  await withCheckedDelta(headPath, deltaPath, format, ({ head, headTable, delta, table }) =>
    writeSections(
      outPath,
      table,
      [...table.sections.keys()].sort((a, b) => a - b),
      (id) =>
        FIXED_SECTIONS.has(id)
          ? { handle: head, ...headTable.sections.get(id)! }
          : { handle: delta, ...table.sections.get(id)! },
    ),
  );
}
