/**
 * The malformed uploads bench/hostile-uploads.ts sends, each made from a valid one (a whole key
 * that is a contribution on the head, or a delta in zkey-delta-v2's order) by one change to its
 * header, its section table, its lengths, its record or its points: every way the review and its
 * follow-ups found to make the coordinator work per element before it counts the elements, and the
 * refusals that need a point read. Each shape's bytes are made when it is sent (a whole key is
 * hundreds of MB at 2^18), and stay within the lengths a creation accepts (the head, or its
 * skeleton, plus at most 64 KiB), unless the shape is that it does not.
 */
import { SECTION } from '../core/zkey/zkey-file.ts';
import { editSections, emptySections, G1, sectionOf } from '../tests/helpers/zkey-tamper.ts';

export type ShapeFamily = 'header' | 'table' | 'lengths' | 'record' | 'points';

export interface UploadShape {
  family: ShapeFamily;
  name: string;
  bytes(): Buffer;
  /** Declared as a zkey-delta-v1 (checked once complete) rather than v2. */
  v1?: boolean;
}

/** The offset of the section table entry (12 bytes: u32 id, u64 size) of `id` in a sectioned file. */
function entryOf(bytes: Buffer, id: number): number {
  let at = 12;
  for (let i = 0; i < bytes.readUInt32LE(8); i++) {
    if (bytes.readUInt32LE(at) === id) return at;
    at += 12 + Number(bytes.readBigUInt64LE(at + 4));
  }
  throw new Error(`no section ${id}`);
}

/** Where the body of section `id` starts. */
const bodyOf = (bytes: Buffer, id: number): number => entryOf(bytes, id) + 12;

function changed(bytes: Buffer, change: (copy: Buffer) => void): Buffer {
  const copy = Buffer.from(bytes);
  change(copy);
  return copy;
}

/** Shapes of the file head and the section table, the same for a whole key and a delta. */
function tableShapes(valid: Buffer): UploadShape[] {
  return [
    { family: 'table', name: 'N empty sections, as long as the upload', bytes: () => emptySections(valid) },
    {
      family: 'table',
      name: 'a section count of 2^32 − 1',
      bytes: () => changed(valid, (b) => b.writeUInt32LE(0xffffffff, 8)),
    },
    { family: 'table', name: 'no section (a count of 0)', bytes: () => changed(valid, (b) => b.writeUInt32LE(0, 8)) },
    { family: 'header', name: 'another version', bytes: () => changed(valid, (b) => b.writeUInt32LE(2, 4)) },
    {
      family: 'header',
      name: 'not a zkey (its magic)',
      bytes: () => changed(valid, (b) => b.write('ykez', 0, 'latin1')),
    },
    {
      family: 'table',
      name: 'an id twice (section 3 numbered 2)',
      bytes: () => changed(valid, (b) => b.writeUInt32LE(2, entryOf(b, 3))),
    },
    {
      family: 'table',
      name: 'sections out of order',
      bytes: () => editSections(valid, (f) => f.sections.reverse()),
    },
    {
      family: 'lengths',
      name: 'a size of 2^64 − 1 (L)',
      bytes: () => changed(valid, (b) => b.writeBigUInt64LE(0xffffffffffffffffn, entryOf(b, SECTION.l) + 4)),
    },
    {
      family: 'lengths',
      name: 'one point less in L, one more in H',
      bytes: () =>
        editSections(valid, (f) => {
          const [l, h] = [sectionOf(f, SECTION.l), sectionOf(f, SECTION.h)];
          h.data = Buffer.concat([h.data, l.data.subarray(0, G1)]);
          l.data = l.data.subarray(G1);
        }),
    },
    {
      family: 'lengths',
      name: 'sizes past the end (the history 8 bytes longer than sent)',
      bytes: () =>
        changed(valid, (b) => b.writeBigUInt64LE(b.readBigUInt64LE(entryOf(b, 10) + 4) + 8n, entryOf(b, 10) + 4)),
    },
    {
      family: 'lengths',
      name: '64 bytes after the last section',
      bytes: () => Buffer.concat([valid, Buffer.alloc(64)]),
    },
    { family: 'lengths', name: 'truncated: its last 8 bytes cut', bytes: () => valid.subarray(0, valid.length - 8) },
    { family: 'lengths', name: 'truncated to half its length', bytes: () => valid.subarray(0, valid.length >> 1) },
  ];
}

/** Shapes of the header (section 2) and the new record, whose history follows the head's `headHistoryBytes`. */
function recordShapes(valid: Buffer, headHistoryBytes: number): UploadShape[] {
  const record = (b: Buffer): number => bodyOf(b, SECTION.mpc) + headHistoryBytes;
  return [
    {
      family: 'header',
      name: 'the header of another circuit (nVars + 1)',
      // Section 2: n8q, q, n8r, r, then nVars.
      bytes: () => changed(valid, (b) => b.writeUInt32LE(b.readUInt32LE(bodyOf(b, 2) + 72) + 1, bodyOf(b, 2) + 72)),
    },
    {
      family: 'record',
      name: 'a history counting 2^32 − 1 records',
      bytes: () => changed(valid, (b) => b.writeUInt32LE(0xffffffff, bodyOf(b, SECTION.mpc) + 64)),
    },
    {
      family: 'record',
      name: 'a record whose proof of knowledge fails (its digest)',
      // The record: δ, g1_s, g1_sx (G1), g2_spx (G2), then its transcript digest.
      bytes: () => changed(valid, (b) => (b[record(b) + 5 * G1 + 3] = b[record(b) + 5 * G1 + 3]! ^ 0xff)),
    },
    {
      family: 'points',
      name: 'g1_s of the record off the curve',
      bytes: () => changed(valid, (b) => (b[record(b) + G1 + G1 / 2] = b[record(b) + G1 + G1 / 2]! ^ 1)),
    },
  ];
}

/** Shapes of the points of L and H: each needs its point read, so its cost depends on where it is. */
function pointShapes(valid: Buffer): UploadShape[] {
  return [
    {
      family: 'points',
      name: 'the first point of L off the curve',
      bytes: () => changed(valid, (b) => (b[bodyOf(b, SECTION.l) + G1 / 2] = b[bodyOf(b, SECTION.l) + G1 / 2]! ^ 1)),
    },
    {
      family: 'points',
      name: 'the first point of H not canonical (x ≥ q)',
      bytes: () => changed(valid, (b) => b.fill(0xff, bodyOf(b, SECTION.h), bodyOf(b, SECTION.h) + G1 / 2)),
    },
    {
      family: 'points',
      name: 'the first point of L at infinity (the head’s is not)',
      bytes: () => changed(valid, (b) => b.fill(0, bodyOf(b, SECTION.l), bodyOf(b, SECTION.l) + G1)),
    },
  ];
}

/** Every malformed whole key made from `next`, a contribution on a head whose history is `headHistoryBytes` long. */
export function wholeKeyShapes(next: Buffer, headHistoryBytes: number): UploadShape[] {
  return [
    ...tableShapes(next),
    {
      family: 'table',
      name: 'sections 3 and 4 swapped',
      bytes: () =>
        editSections(next, (f) => {
          const [a, b] = [f.sections.findIndex((s) => s.id === 3), f.sections.findIndex((s) => s.id === 4)];
          [f.sections[a], f.sections[b]] = [f.sections[b]!, f.sections[a]!];
        }),
    },
    ...recordShapes(next, headHistoryBytes),
    ...pointShapes(next),
    {
      family: 'points',
      name: 'IC changed (a section no contribution may touch)',
      bytes: () => changed(next, (b) => (b[bodyOf(b, SECTION.ic) + 5] = b[bodyOf(b, SECTION.ic) + 5]! ^ 1)),
    },
    {
      family: 'points',
      name: 'B2’s last byte changed (the last section no contribution may touch)',
      bytes: () => changed(next, (b) => (b[bodyOf(b, SECTION.l) - 13] = b[bodyOf(b, SECTION.l) - 13]! ^ 1)),
    },
  ];
}

/** Every malformed delta made from `delta` (v2's order) on a head whose history is `headHistoryBytes` long. */
export function deltaShapes(delta: Buffer, headHistoryBytes: number): UploadShape[] {
  return [
    ...tableShapes(delta),
    {
      family: 'table',
      name: 'a section count of 2^32 − 1, as v1 (checked once complete)',
      bytes: () => changed(delta, (b) => b.writeUInt32LE(0xffffffff, 8)),
      v1: true,
    },
    { family: 'table', name: 'N empty sections, as v1', bytes: () => emptySections(delta), v1: true },
    ...recordShapes(delta, headHistoryBytes),
    ...pointShapes(delta),
  ];
}
