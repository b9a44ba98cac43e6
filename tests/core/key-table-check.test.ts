/**
 * The check of an uploaded whole key before a byte of it is hashed or verified
 * (core/zkey/key-table-check.ts, core/delta/check-delta-record.ts's checkWholeKeyUpload): a real
 * contribution on the head passes and its sections 2 and 10 come back; every malformed shape of its
 * header, its section table and its lengths is refused on a few reads whatever it declares (a count
 * of millions of empty sections costs one read of 12 bytes), with `zkey.malformed` for what is no
 * sectioned key and `zkey.section_table_mismatch` for a table that is not the head's; its record is
 * refused with the verifier's own codes. No refusal quotes the file's bytes or grows with them.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { open, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkKeyTableAgainstHead } from '../../core/zkey/key-table-check.ts';
import { checkWholeKeyUpload } from '../../core/delta/check-delta-record.ts';
import { contributeFast } from '../../core/kernel/contribute-fast.ts';
import { isCoordinatorError, type ErrorCode } from '../../core/errors.ts';
import { SECTION } from '../../core/zkey/zkey-file.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { headWithSkeleton } from '../helpers/head-skeleton.ts';
import { editSections, G1, sectionOf, splitSections } from '../helpers/zkey-tamper.ts';

const LABEL = 'the uploaded key';
let dataDir: string;
let scratch: string;
let head: string;
let next: Buffer;

before(async () => {
  ({ dataDir, scratch, head } = await headWithSkeleton('key-table-check-'));
  const file = path.join(scratch, 'next.zkey');
  await contributeFast(head, file, 'next', 'entropy of the next key', { workers: 2 });
  next = await readFile(file);
});
after(() => cleanUp(dataDir, scratch));

/** `bytes` as an upload's file. */
async function uploaded(bytes: Buffer, name = 'candidate.zkey'): Promise<string> {
  const file = path.join(scratch, name);
  await writeFile(file, bytes);
  return file;
}

/** The table entry (12 bytes: u32 id, u64 size) of the `index`-th section of `bytes`, as an offset. */
function entryOffset(bytes: Buffer, index: number): number {
  let at = 12;
  for (let i = 0; i < index; i++) at += 12 + Number(bytes.readBigUInt64LE(at + 4));
  return at;
}

/** A copy of `next` with `change` applied to its bytes. */
function changed(change: (bytes: Buffer) => void): Buffer {
  const bytes = Buffer.from(next);
  change(bytes);
  return bytes;
}

async function refusedWith(check: Promise<unknown>, code: ErrorCode, rule: RegExp, what: string): Promise<void> {
  await assert.rejects(
    check,
    (error) => {
      assert.ok(isCoordinatorError(error, code), `${what}: ${String(error)}`);
      assert.match(error.message, rule, what);
      assert.ok(error.message.length < 300, `${what}: the refusal is bounded (${error.message.length} characters)`);
      return true;
    },
    what,
  );
}

test('a contribution on the head passes, its header and history read for the record check', async () => {
  const checked = await checkKeyTableAgainstHead(head, await uploaded(next), LABEL);
  const sections = splitSections(next);
  assert.deepEqual(
    [...checked.table.sections.keys()],
    sections.sections.map((s) => s.id),
  );
  assert.ok(checked.header.equals(sectionOf(sections, SECTION.grothHeader).data));
  assert.ok(checked.mpc.equals(sectionOf(sections, SECTION.mpc).data));
  await checkWholeKeyUpload(head, await uploaded(next));
});

test('every malformed header, table and length is refused on its table alone, with its code', async () => {
  const size = next.length;
  // The review's upload: a zkey header and as many empty sections as the key's length holds.
  const emptySections = Buffer.alloc(size);
  next.copy(emptySections, 0, 0, 8);
  const declared = Math.floor((size - 12) / 12);
  emptySections.writeUInt32LE(declared, 8);
  for (let i = 0; i < declared; i++) emptySections.writeUInt32LE(i + 1, 12 + 12 * i);
  const entry = (index: number): number => entryOffset(next, index);
  const cases: Array<[string, Buffer, ErrorCode, RegExp]> = [
    [
      `${declared} empty sections`,
      emptySections,
      'zkey.section_table_mismatch',
      new RegExp(`declares ${declared} sections, the head has 10`),
    ],
    [
      'a count of 2^32 - 1',
      changed((b) => b.writeUInt32LE(0xffffffff, 8)),
      'zkey.section_table_mismatch',
      /declares 4294967295 sections/,
    ],
    ['no section', changed((b) => b.writeUInt32LE(0, 8)), 'zkey.section_table_mismatch', /declares 0 sections/],
    ['another version', changed((b) => b.writeUInt32LE(2, 4)), 'zkey.section_table_mismatch', /its version is 2/],
    ['not a zkey', changed((b) => b.write('ykez', 0, 'latin1')), 'zkey.malformed', /does not start with "zkey"/],
    ['shorter than a header', next.subarray(0, 8), 'zkey.malformed', /too short/],
    [
      'an id twice',
      changed((b) => b.writeUInt32LE(2, entry(2))),
      'zkey.section_table_mismatch',
      /entry 3 is section 2, where .* have 3/,
    ],
    [
      'sections out of order',
      editSections(next, (f) => {
        [f.sections[2], f.sections[3]] = [f.sections[3]!, f.sections[2]!];
      }),
      'zkey.section_table_mismatch',
      /entry 3 is section 4/,
    ],
    [
      'an id beyond the ten',
      changed((b) => b.writeUInt32LE(0xffffffff, entry(9))),
      'zkey.section_table_mismatch',
      /entry 10 is section 4294967295/,
    ],
    [
      'a size that overflows',
      changed((b) => b.writeBigUInt64LE(0xffffffffffffffffn, entry(7) + 4)),
      'zkey.section_table_mismatch',
      /section 8 is 18446744073709551615 bytes/,
    ],
    [
      'one point less in L, one more in H (the same length)',
      editSections(next, (f) => {
        const [l, h] = [sectionOf(f, SECTION.l), sectionOf(f, SECTION.h)];
        h.data = Buffer.concat([h.data, l.data.subarray(0, G1)]);
        l.data = l.data.subarray(G1);
      }),
      'zkey.section_table_mismatch',
      /section 8 is \d+ bytes, the head's \d+/,
    ],
    [
      'a history far longer than one record',
      changed((b) => b.writeBigUInt64LE(b.readBigUInt64LE(entry(9) + 4) + 100_000n, entry(9) + 4)),
      'zkey.section_table_mismatch',
      /section 10 is \d+ bytes, more than the head's/,
    ],
    ['truncated', next.subarray(0, size - 8), 'zkey.malformed', /truncated inside section 10/],
    ['ending in its table', next.subarray(0, entry(9) + 4), 'zkey.malformed', /truncated inside entry 10/],
    ['bytes after the last section', Buffer.concat([next, Buffer.alloc(9)]), 'zkey.malformed', /9 unexpected bytes/],
    [
      'section 1 not the head’s (another protocol)',
      changed((b) => b.writeUInt32LE(2, entry(0) + 12)),
      'zkey.section_table_mismatch',
      /section 1 \(the protocol\)/,
    ],
  ];
  for (const [what, bytes, code, rule] of cases) {
    await refusedWith(checkKeyTableAgainstHead(head, await uploaded(bytes), LABEL), code, rule, what);
  }
});

test('a count of millions costs one 12-byte read: the entries are never read', async () => {
  const file = await uploaded(changed((b) => b.writeUInt32LE(0xffffffff, 8)));
  const reads: number[] = [];
  const handle = await open(file, 'r');
  const proto = Object.getPrototypeOf(handle) as { read: (...args: unknown[]) => Promise<unknown> };
  await handle.close();
  const read = proto.read;
  proto.read = function (this: unknown, ...args: unknown[]) {
    reads.push(typeof args[2] === 'number' ? args[2] : -1);
    return read.apply(this, args);
  };
  try {
    await assert.rejects(checkKeyTableAgainstHead(head, file, LABEL), /declares 4294967295 sections/);
  } finally {
    proto.read = read;
  }
  // The head's header and ten entries (a verified key), then the candidate's first 12 bytes: nothing per declared
  // section.
  assert.deepEqual(
    reads,
    Array.from({ length: 12 }, () => 12),
  );
});

test('a record that is not one contribution on the head is refused with the verifier’s codes', async () => {
  const sections = splitSections(next);
  const headHistoryBytes = sectionOf(splitSections(await readFile(head)), SECTION.mpc).data;
  const headHistory = headHistoryBytes.length;
  const history = sectionOf(sections, SECTION.mpc).data.length;
  assert.ok(history > headHistory);
  const inRecord = (offset: number, change: (bytes: Buffer, at: number) => void): Buffer =>
    changed((b) => change(b, entryOffset(next, 9) + 12 + headHistory + offset));
  const cases: Array<[string, Buffer, ErrorCode, RegExp]> = [
    [
      'a history counting 2^32 - 1 records',
      changed((b) => b.writeUInt32LE(0xffffffff, entryOffset(next, 9) + 12 + 64)),
      'zkey.malformed',
      /MPC section truncated/,
    ],
    [
      'the head’s own history (no new record)',
      editSections(next, (f) => (sectionOf(f, SECTION.mpc).data = Buffer.from(headHistoryBytes))),
      'contribution.no_new_contribution',
      /adds no contribution/,
    ],
    [
      'a proof of knowledge that fails (its transcript digest)',
      inRecord(3 * G1 + 2 * G1 + 5, (b, at) => (b[at] = b[at]! ^ 0xff)),
      'contribution.invalid_proof_of_knowledge',
      /transcript digest/,
    ],
    [
      'g1_s of the record off the curve',
      inRecord(G1 + 1, (b, at) => (b[at] = b[at]! ^ 1)),
      'contribution.point_not_on_curve',
      /g1_s of the new contribution is not a point of the curve/,
    ],
    [
      'δ in the header not the record’s',
      changed((b) => {
        // The header ends with δ1 (G1) and δ2 (G2): a byte of δ1's x.
        const header = entryOffset(next, 1) + 12;
        const delta1 = header + Number(b.readBigUInt64LE(entryOffset(next, 1) + 4)) - 3 * G1 + 1;
        b[delta1] = b[delta1]! ^ 1;
      }),
      'contribution.delta_mismatch',
      /delta/,
    ],
  ];
  for (const [what, bytes, code, rule] of cases) {
    await refusedWith(checkWholeKeyUpload(head, await uploaded(bytes)), code, rule, what);
  }
});
