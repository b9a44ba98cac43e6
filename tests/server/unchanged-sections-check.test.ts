/**
 * A whole key's bytes that no contribution may change, compared with the head's as the upload
 * arrives (core/link-check/unchanged-sections-check.ts, followed with the key's table by
 * server/files/upload-table-check.ts): a real contribution on the head, in pieces or whole, passes;
 * a change to section 1, to section 2 but δ, or to IC, the coefficients, A, B1 or B2 (their last
 * byte) is refused once the bytes that hold it are in, not before, with the code the end of the
 * upload and the verifier's structural check give the same key; a change to δ is left to those.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { contributeFast } from '../../core/kernel/contribute-fast.ts';
import { isCoordinatorError, type ErrorCode } from '../../core/errors.ts';
import { checkWholeKeyUpload } from '../../core/delta/check-delta-record.ts';
import { checkLinkStructure } from '../../core/link-check/check-link-structure.ts';
import { UnchangedSectionsCheck } from '../../core/link-check/unchanged-sections-check.ts';
import { headTable, wholeKeyExpectation } from '../../core/zkey/key-table-check.ts';
import { readZkeyInfo, SECTION } from '../../core/zkey/zkey-file.ts';
import { UploadTableCheck } from '../../server/files/upload-table-check.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { headWithSkeleton } from '../helpers/head-skeleton.ts';

const LABEL = 'the uploaded key';
let dataDir: string;
let scratch: string;
let head: string;
let next: Buffer;
/** Where each section's body is in `next` (the head, contribution 0, keeps snarkjs's `zkey new` order). */
let sections: Map<number, { offset: number; size: number }>;

before(async () => {
  ({ dataDir, scratch, head } = await headWithSkeleton('unchanged-sections-'));
  const file = path.join(scratch, 'next.zkey');
  await contributeFast(head, file, 'next', 'entropy of the next key', { workers: 2 });
  next = await readFile(file);
  sections = (await readZkeyInfo(file)).sections;
});
after(() => cleanUp(dataDir, scratch));

async function tableCheck(file: string, length: number): Promise<UploadTableCheck> {
  const table = await headTable(head);
  const unchanged = new UnchangedSectionsCheck(head, table, LABEL);
  return new UploadTableCheck(file, wholeKeyExpectation(table, LABEL), length, unchanged);
}

/**
 * `bytes` arriving as an upload, cut at each of `cuts` (each write reported, then checked):
 * the refusal and how many bytes were in when it was found.
 */
async function followed(bytes: Buffer, cuts: number[]): Promise<{ refusal?: Error; at?: number }> {
  const file = path.join(scratch, 'upload');
  await writeFile(file, '');
  const check = await tableCheck(file, bytes.length);
  try {
    let written = 0;
    for (const cut of [...cuts, bytes.length]) {
      await appendFile(file, bytes.subarray(written, cut));
      written = cut;
      check.written(written);
      await check.caughtUp();
      if (check.refusal) return { refusal: check.refusal, at: written };
    }
    return {};
  } finally {
    await check.close();
    await rm(file, { force: true });
  }
}

/** The code the end of the upload, then the verifier's structural check, give the key `bytes`. */
async function endCode(bytes: Buffer): Promise<string> {
  const file = path.join(scratch, 'ended.zkey');
  await writeFile(file, bytes);
  try {
    await checkWholeKeyUpload(head, file);
    await checkLinkStructure(await readZkeyInfo(head), await readZkeyInfo(file), { kind: 'random' });
    return 'accepted';
  } catch (error) {
    assert.ok(isCoordinatorError(error), String(error));
    return error.code;
  } finally {
    await rm(file, { force: true });
  }
}

function changed(offset: number, change: (bytes: Buffer, at: number) => void): Buffer {
  const copy = Buffer.from(next);
  change(copy, offset);
  return copy;
}

const flip = (bytes: Buffer, at: number): void => {
  bytes[at] = bytes[at]! ^ 1;
};

test('a contribution on the head passes, in pieces or whole; its δ is not compared', async () => {
  const pieces = Array.from({ length: Math.floor(next.length / 4093) }, (_, i) => (i + 1) * 4093);
  assert.deepEqual(await followed(next, pieces), {});
  assert.deepEqual(await followed(next, []), {});
  // δ ends section 2 (delta_1 from its byte 468, then delta_2): a contribution changes it; its record check judges it.
  const header = sections.get(SECTION.grothHeader)!;
  const otherDelta = changed(header.offset + 468 + 5, flip);
  assert.deepEqual(await followed(otherDelta, [header.offset + header.size]), {});
  assert.equal(await endCode(otherDelta), 'contribution.delta_mismatch', 'the end refuses it, for its record');
});

test('a byte no contribution may change is refused once it is in, with the end’s and the verifier’s code', async () => {
  const body = (id: number): { offset: number; size: number } => sections.get(id)!;
  const last = (id: number): number => body(id).offset + body(id).size - 1;
  const header = body(SECTION.grothHeader).offset;
  // Section 2: n8q, q (32), n8r, r (32), nVars, nPublic, domainSize, then α1, β1, β2, γ2, δ1, δ2.
  const cases: Array<[string, Buffer, number, ErrorCode, RegExp]> = [
    [
      'another protocol (section 1)',
      changed(body(SECTION.protocol).offset, (b, at) => b.writeUInt32LE(2, at)),
      last(SECTION.protocol),
      'zkey.section_table_mismatch',
      /section 1 \(the protocol\)/,
    ],
    ['another base field', changed(header + 4, flip), last(SECTION.grothHeader), 'zkey.malformed', /base field/],
    [
      'another circuit’s header (nVars + 1)',
      changed(header + 72, (b, at) => b.writeUInt32LE(b.readUInt32LE(at) + 1, at)),
      last(SECTION.grothHeader),
      'contribution.wrong_circuit',
      /another circuit/,
    ],
    [
      'another α1',
      changed(header + 84 + 5, flip),
      last(SECTION.grothHeader),
      'contribution.header_mismatch',
      /key header/,
    ],
    [
      'IC changed',
      changed(body(SECTION.ic).offset + 5, flip),
      body(SECTION.ic).offset + 5,
      'contribution.header_mismatch',
      /the IC section/,
    ],
    [
      'a coefficient changed',
      changed(body(SECTION.coefficients).offset + 100, flip),
      body(SECTION.coefficients).offset + 100,
      'contribution.header_mismatch',
      /the coefficients section/,
    ],
    ['A’s last byte', changed(last(SECTION.a), flip), last(SECTION.a), 'contribution.header_mismatch', /the A section/],
    [
      'B1’s last byte',
      changed(last(SECTION.b1), flip),
      last(SECTION.b1),
      'contribution.header_mismatch',
      /the B1 section/,
    ],
    [
      'B2’s last byte',
      changed(last(SECTION.b2), flip),
      last(SECTION.b2),
      'contribution.header_mismatch',
      /the B2 section/,
    ],
  ];
  for (const [what, bytes, fault, code, rule] of cases) {
    // In just before the byte that must be refused: nothing yet; with it, refused at once.
    const { refusal, at } = await followed(bytes, [fault, fault + 1]);
    assert.ok(isCoordinatorError(refusal, code), `${what}: ${String(refusal)}`);
    assert.match(refusal.message, rule, what);
    assert.equal(at, fault + 1, `${what}: refused with the byte that holds it`);
    assert.equal(await endCode(bytes), code, `${what}: the code the end of the upload or the verifier gives`);
    // Sent whole (one write), found when the upload is finished, before anything reads it further.
    const file = path.join(scratch, 'whole');
    await writeFile(file, bytes);
    const check = await tableCheck(file, bytes.length);
    assert.equal((await check.finish(bytes.length))?.code, code, `${what}, whole`);
  }
});
