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
import { readExactly } from '../binfile/read-exactly.ts';
import { readSectionTable, SectionTableError, type SectionTable } from '../binfile/section-table.ts';

const MAGIC = 'zkey';
/** The sections a contribution never changes, left out of a skeleton. */
export const FIXED_SECTIONS = new Set([3, 4, 5, 6, 7]);
/** The sections a contribution scales point by point (L, H): the bulk of what crosses the network. */
export const STREAMED_SECTIONS = [8, 9];
const CHUNK = 1 << 20;
/** snarkjs's section 10: the 64-byte hash of the circuit, a u32 count, then the records. */
const MPC_COUNT_OFFSET = 64;

async function tableOf(handle: FileHandle, what: string): Promise<SectionTable> {
  const { size } = await handle.stat();
  try {
    const table = await readSectionTable(handle, size, MAGIC);
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

function malformed(rule: string): CoordinatorError {
  return new CoordinatorError('delta.malformed', `The contribution delta breaks a rule: ${rule}.`, { rule });
}

async function sameBytes(a: FileHandle, aAt: number, b: FileHandle, bAt: number, size: number): Promise<boolean> {
  for (let done = 0; done < size; done += CHUNK) {
    const length = Math.min(CHUNK, size - done);
    const [x, y] = await Promise.all([readExactly(a, aAt + done, length), readExactly(b, bAt + done, length)]);
    if (!x.equals(y)) return false;
  }
  return true;
}

/** Refuses a skeleton that is not a contribution's skeleton on top of the head's (`delta.malformed`). */
async function checkDelta(head: FileHandle, headTable: SectionTable, delta: FileHandle, table: SectionTable) {
  // snarkjs writes a contribution's sections in ascending order whatever the order of its input
  // (the first key of a chain lists 4 before 3), so the head's order is not the rule: its ids are.
  const headIds = [...headTable.sections.keys()].sort((a, b) => a - b);
  const ids = [...table.sections.keys()];
  if (table.version !== headTable.version) throw malformed('the file version differs from the head’s');
  if (ids.length !== headIds.length || ids.some((id, i) => id !== headIds[i])) {
    throw malformed('its sections are not the head’s, in ascending order');
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
  if (h10.size < MPC_COUNT_OFFSET + 4 || d10.size < MPC_COUNT_OFFSET + 4) throw malformed('section 10 is too short');
  const countAt = MPC_COUNT_OFFSET;
  const headCount = (await readExactly(head, h10.offset + countAt, 4)).readUInt32LE(0);
  const count = (await readExactly(delta, d10.offset + countAt, 4)).readUInt32LE(0);
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
  if (d10.size <= h10.size) throw malformed('section 10 adds no contribution');
  const rest = h10.size - countAt - 4;
  if (
    !(await sameBytes(head, h10.offset, delta, d10.offset, countAt)) ||
    !(await sameBytes(head, h10.offset + countAt + 4, delta, d10.offset + countAt + 4, rest))
  ) {
    throw malformed('section 10 changes the head’s history');
  }
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
  work: (files: CheckedDelta) => Promise<T>,
): Promise<T> {
  const head = await open(headPath, 'r');
  try {
    const delta = await open(deltaPath, 'r');
    try {
      const headTable = await tableOf(head, 'the head');
      const table = await tableOf(delta, 'the contribution delta');
      await checkDelta(head, headTable, delta, table);
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
 * `headPath` (`delta.malformed`, `delta.stale_head`): the checks spliceSkeleton makes first.
 */
export async function checkSkeletonAgainstHead(headPath: string, deltaPath: string): Promise<void> {
  await withCheckedDelta(headPath, deltaPath, async () => undefined);
}

/**
 * Checks the skeleton at `deltaPath` against the head at `headPath` and writes the full key (the
 * skeleton with sections 3 to 7 taken from the head) to `outPath`, crash-safely.
 */
export async function spliceSkeleton(headPath: string, deltaPath: string, outPath: string): Promise<void> {
  await withCheckedDelta(headPath, deltaPath, ({ head, headTable, delta, table }) =>
    writeSections(outPath, table, [...table.sections.keys()], (id) =>
      FIXED_SECTIONS.has(id)
        ? { handle: head, ...headTable.sections.get(id)! }
        : { handle: delta, ...table.sections.get(id)! },
    ),
  );
}
