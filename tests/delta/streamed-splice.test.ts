/**
 * The coordinator's intake of a delta as it arrives (core/delta/streamed-splice.ts,
 * core/link-check/streamed-candidate-sums.ts): fed a zkey-delta-v2 in pieces of any size, the
 * splice writes byte for byte the key spliceSkeleton writes from the finished delta, with its file
 * hash, and refuses a layout that breaks a delta's rules (delta.malformed, naming the rule) as soon as
 * the header that breaks it is in, whatever count or size it declares; it hands the record to its
 * check before a single point reaches the sums or a head section is copied, and a refused record
 * stops it there; the sums made chunk by chunk are the ones the verifier makes reading the whole
 * key (the same verdict and combination with them as without), and they stop with the verifier's
 * refusal on a point at infinity the head does not have or a point off the curve.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { open, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { spliceSkeleton } from '../../core/delta/skeleton-zkey.ts';
import { DELTA_FORMAT_V1 } from '../../core/delta/delta-format.ts';
import { CoordinatorError, isCoordinatorError } from '../../core/errors.ts';
import { NotStreamable, StreamedSplice } from '../../core/delta/streamed-splice.ts';
import { hashZkeyFile, type ZkeyHashes } from '../../core/zkey/zkey-hashes.ts';
import { StreamedCandidateSums, type SumBatching } from '../../core/link-check/streamed-candidate-sums.ts';
import { verifyLinkFromHead } from '../../core/link-check/verify-link-from-head.ts';
import type { CandidateSums } from '../../core/link-check/link-combination-cache.ts';
import { hashFile } from '../../core/crypto/file-hash.ts';
import { readSectionTable } from '../../core/binfile/section-table.ts';
import { SECTION } from '../../core/zkey/zkey-file.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { headWithSkeleton } from '../helpers/head-skeleton.ts';
import { kernelDelta } from '../helpers/kernel-delta.ts';
import { editSections, G1, sectionOf } from '../helpers/zkey-tamper.ts';
import { writeFile } from 'node:fs/promises';

let dataDir: string;
let scratch: string;
let head: string;
let delta: Buffer;
let deltaFile: string;
let spliced: string;

before(async () => {
  let inputs: string;
  ({ dataDir, scratch, head, skeleton: inputs } = await headWithSkeleton('streamed-splice-'));
  deltaFile = path.join(scratch, 'delta.skeleton');
  // The streaming clients send v2, the record before L and H; the v1 file is spliced whole below.
  const ascending = path.join(scratch, 'delta-v1.skeleton');
  delta = await kernelDelta(inputs, ascending, 'streamed', 'entropy');
  await writeFile(deltaFile, delta);
  spliced = path.join(scratch, 'whole-splice.zkey');
  await spliceSkeleton(head, ascending, spliced, DELTA_FORMAT_V1);
});
after(() => cleanUp(dataDir, scratch));

/** Feeds `bytes` to a new splice in pieces of random sizes up to `maxPiece`; the chunks of L and H go to `sink`. */
async function streamSplice(...args: Parameters<typeof streamSpliceHashes>): Promise<string> {
  return (await streamSpliceHashes(...args)).fileHash;
}

/** streamSplice, with the key's section hashes the splice took as it wrote the key. */
async function streamSpliceHashes(
  bytes: Buffer,
  maxPiece: number,
  out: string,
  sink: (section: number, first: number, points: Uint8Array) => void = () => {},
  checkRecord?: (header: Uint8Array, history: Uint8Array) => Promise<void>,
  uploadLength?: number,
): Promise<ZkeyHashes> {
  const splice = await StreamedSplice.open(head, out, sink, checkRecord, uploadLength);
  try {
    for (let at = 0; at < bytes.length;) {
      const piece = 1 + Math.floor(Math.random() * maxPiece);
      await splice.push(bytes.subarray(at, at + piece));
      at += piece;
    }
    const fileHash = await splice.finish();
    return { fileHash, ...(splice.sectionHashes ? { sectionHashes: splice.sectionHashes } : {}) };
  } catch (error) {
    await splice.abort();
    throw error;
  }
}

describe('the splice as the delta arrives', () => {
  it('writes the key spliceSkeleton writes, byte for byte, with its file and section hashes, any pieces', async () => {
    const expected = await readFile(spliced);
    const wholeRead = await hashZkeyFile(spliced);
    assert.equal(wholeRead.fileHash, await hashFile(spliced));
    assert.deepEqual(Object.keys(wholeRead.sectionHashes ?? {}), ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
    for (const maxPiece of [1 + Math.floor(Math.random() * 40), 4096, 1 << 20]) {
      const out = path.join(scratch, `streamed-${maxPiece}.zkey`);
      const hashes = await streamSpliceHashes(delta, maxPiece, out);
      assert.ok((await readFile(out)).equals(expected), `pieces of up to ${maxPiece} bytes`);
      assert.deepEqual(hashes, wholeRead);
    }
  });

  it('copies the head’s fixed sections only once all of L is in', async () => {
    const handle = await open(deltaFile, 'r');
    const table = await readSectionTable(handle, delta.length, 'zkey').finally(() => handle.close());
    const hHeader = table.sections.get(SECTION.h)!.offset - 12;
    const out = path.join(scratch, 'deferred.zkey');
    const splice = await StreamedSplice.open(head, out, () => {});
    try {
      await splice.push(delta.subarray(0, hHeader));
      const key = await readFile(spliced);
      const keyHandle = await open(spliced, 'r');
      const keyTable = await readSectionTable(keyHandle, key.length, 'zkey').finally(() => keyHandle.close());
      const coefficients = keyTable.sections.get(4)!;
      const written = await readFile(out);
      const place = written.subarray(coefficients.offset, coefficients.offset + coefficients.size);
      assert.ok(
        place.every((byte) => byte === 0),
        'nothing of the head’s sections is written before H begins',
      );
      await splice.push(delta.subarray(hHeader, hHeader + 12));
      const after = (await readFile(out)).subarray(coefficients.offset, coefficients.offset + coefficients.size);
      assert.ok(after.equals(key.subarray(coefficients.offset, coefficients.offset + coefficients.size)));
    } finally {
      await splice.abort();
    }
  });

  it('hands the record to its check before any point or head section, and stops on its refusal', async () => {
    const events: string[] = [];
    const sink = (section: number): void => void events.push(`points of ${section}`);
    const out = path.join(scratch, 'checked.zkey');
    await streamSplice(delta, 4096, out, sink, async (header, history) => {
      events.push('record');
      assert.ok(header.length > 0 && history.length > 0, 'the header and the history are handed over');
    });
    assert.equal(events[0], 'record', 'the record is checked first');
    assert.ok(events.length > 1, 'then the points follow');

    const refusedOut = path.join(scratch, 'refused-record.zkey');
    const refused = new CoordinatorError('contribution.invalid_proof_of_knowledge', 'a garbage record');
    const pointsSeen: number[] = [];
    await assert.rejects(
      streamSplice(
        delta,
        4096,
        refusedOut,
        (section) => pointsSeen.push(section),
        async () => {
          throw refused;
        },
      ),
      (error) => error === refused,
    );
    assert.deepEqual(pointsSeen, [], 'no point reached the sums');
    await assert.rejects(stat(refusedOut), 'no key is left');
  });

  it('refuses a layout that breaks a rule with delta.malformed naming it, and leaves no file', async () => {
    /** The delta's 12-byte file head declaring `count` sections, and nothing else. */
    const declaring = (count: number): Buffer => {
      const bytes = Buffer.from(delta.subarray(0, 12));
      bytes.writeUInt32LE(count, 8);
      return bytes;
    };
    const cases: Array<[string, Buffer, RegExp]> = [
      ['sections out of order', editSections(delta, (f) => f.sections.reverse()), /in the order of zkey-delta-v2/],
      [
        'the ascending order of v1 (the record after H)',
        editSections(delta, (f) => f.sections.sort((a, b) => a.id - b.id)),
        /in the order of zkey-delta-v2/,
      ],
      [
        'H one point longer',
        editSections(delta, (f) => {
          const h = sectionOf(f, SECTION.h);
          h.data = Buffer.concat([h.data, h.data.subarray(0, G1)]);
        }),
        /section 9 is not the head’s size/,
      ],
      ['bytes after the last section', Buffer.concat([delta, Buffer.alloc(7)]), /bytes after the last section/],
      // Refused on its first 12 bytes, whatever the count: nothing is read or kept per declared section.
      ['a count far above the head’s', declaring(0xffffffff), /declares 4294967295 sections, the head has 10/],
      ['a count of zero', declaring(0), /declares 0 sections, the head has 10/],
      [
        'a section empty that a contribution fills (δ’s header)',
        editSections(delta, (f) => (sectionOf(f, 2).data = Buffer.alloc(0))),
        /section 2 is not the head’s size/,
      ],
      [
        'a fixed section that is not empty',
        editSections(delta, (f) => (sectionOf(f, 4).data = Buffer.alloc(12))),
        /section 4 must be empty/,
      ],
      ['not a zkey', Buffer.concat([Buffer.from('ykez'), delta.subarray(4)]), /does not start with "zkey"/],
    ];
    for (const [what, bytes, rule] of cases) {
      const out = path.join(scratch, 'refused.zkey');
      await assert.rejects(
        streamSplice(bytes, 4096, out),
        (error) => isCoordinatorError(error, 'delta.malformed') && rule.test(error.message),
        what,
      );
      await assert.rejects(stat(out), `${what}: no key is left`);
    }
    const out = path.join(scratch, 'short.zkey');
    await assert.rejects(streamSplice(delta.subarray(0, delta.length - 1), 4096, out), NotStreamable, 'a short delta');
    // An upload whose declared length its sections do not fill: refused at the history's header, before any point.
    for (const uploadLength of [delta.length - 1, delta.length + 64]) {
      const points: number[] = [];
      await assert.rejects(
        streamSplice(delta, 4096, out, (section) => points.push(section), undefined, uploadLength),
        (error) =>
          isCoordinatorError(error, 'delta.malformed') &&
          error.message.includes(`add up to ${delta.length} bytes, the upload declares ${uploadLength}`),
      );
      assert.deepEqual(points, [], 'no point reached the sums');
    }
    assert.equal(await streamSplice(delta, 4096, out, () => {}, undefined, delta.length), await hashFile(spliced));
  });
});

describe('the link check’s sums as the delta arrives', () => {
  const key = randomBytes(32);

  /**
   * The test key's L and H each fit in one of the splice's chunks; with `batching`, each chunk is
   * handed on in pieces of PIECE_POINTS, so that batches gather several pieces and a section's
   * tail is summed piece by piece, as a real key's 2^15-point chunks are.
   */
  const PIECE_POINTS = 3;
  const SMALL_BATCHES: SumBatching = { batchPoints: 5, tailPoints: 4 };

  async function streamedSums(
    bytes: Buffer,
    batching?: SumBatching,
  ): Promise<{ sums: StreamedCandidateSums; pieces: number[] }> {
    const sums = await StreamedCandidateSums.start(key, head, batching);
    const out = path.join(scratch, `summed-${randomBytes(4).toString('hex')}.zkey`);
    const pieces: number[] = [];
    await streamSplice(bytes, 1 << 16, out, (section, first, points) => {
      const step = batching ? PIECE_POINTS * G1 : points.length;
      for (let at = 0; at < points.length; at += step) {
        sums.add(section, first + at / G1, points.subarray(at, at + step));
        pieces.push(section);
      }
    });
    return { sums, pieces };
  }

  async function sumsOf(bytes: Buffer, batching?: SumBatching): Promise<CandidateSums | undefined> {
    return (await streamedSums(bytes, batching)).sums.result();
  }

  it('are the sums the verifier makes from the whole key: same verdict, same combination', async () => {
    const read = await verifyLinkFromHead(head, spliced, { challenge: { key } });
    for (const batching of [undefined, SMALL_BATCHES]) {
      const { sums, pieces } = await streamedSums(delta, batching);
      const next = await sums.result();
      assert.ok(next, 'the sums ran to the end');
      if (batching) {
        const lPieces = pieces.filter((id) => id === SECTION.l).length;
        assert.ok(lPieces >= 4, `L came in ${lPieces} pieces: enough for a batch and a tail`);
        // Batches of two pieces, the tail's pieces one by one: fewer sums than pieces.
        assert.ok(sums.sumsRun < pieces.length, `${sums.sumsRun} sums of ${pieces.length} pieces`);
      } else {
        assert.equal(sums.sumsRun, 2, 'one chunk each of L and H, each summed at once');
      }
      const given = await verifyLinkFromHead(head, spliced, { challenge: { key, next } });
      assert.deepEqual(given.combination, read.combination);
      assert.equal(given.contributionHash, read.contributionHash);
    }
  });

  it('make a tampered L fail the check as reading it does', async () => {
    const tampered = editSections(delta, (f) => {
      const l = sectionOf(f, SECTION.l);
      l.data.copy(l.data, 0, G1, 2 * G1);
    });
    const out = path.join(scratch, 'tampered.zkey');
    await streamSplice(tampered, 1 << 16, out);
    for (const batching of [undefined, SMALL_BATCHES]) {
      const next = await sumsOf(tampered, batching);
      assert.ok(next, 'valid points where the head has them: summed');
      await assert.rejects(verifyLinkFromHead(head, out, { challenge: { key, next } }), /L section is not consistent/);
    }
  });

  it('stop with the verifier’s refusal on a point at infinity the head lacks, or a point off the curve', async () => {
    const refusalOf = async (bytes: Buffer, batching?: SumBatching): Promise<CoordinatorError | undefined> => {
      const { sums } = await streamedSums(bytes, batching);
      assert.equal(await sums.result(), undefined, 'no sums');
      return sums.refusal;
    };
    const identity = editSections(delta, (f) => sectionOf(f, SECTION.l).data.fill(0, G1, 2 * G1));
    const identityRefusal = await refusalOf(identity);
    assert.ok(isCoordinatorError(identityRefusal, 'contribution.identity_pattern_changed'), String(identityRefusal));
    const offCurve = editSections(delta, (f) => {
      const h = sectionOf(f, SECTION.h);
      h.data[G1 / 2] = h.data[G1 / 2]! ^ 1;
    });
    const offCurveRefusal = await refusalOf(offCurve);
    assert.ok(isCoordinatorError(offCurveRefusal, 'contribution.point_not_on_curve'), String(offCurveRefusal));
    assert.match(offCurveRefusal.message, /^point 0 of the H section is not a point of the curve$/);
    // Point 7 is the second of the second batch (points 6 to 11): named by its index in the
    // section, not in its batch.
    const offCurveLater = editSections(delta, (f) => {
      const h = sectionOf(f, SECTION.h);
      h.data[7 * G1 + G1 / 2] = h.data[7 * G1 + G1 / 2]! ^ 1;
    });
    const laterRefusal = await refusalOf(offCurveLater, SMALL_BATCHES);
    assert.ok(isCoordinatorError(laterRefusal, 'contribution.point_not_on_curve'), String(laterRefusal));
    assert.match(laterRefusal.message, /^point 7 of the H section is not a point of the curve$/);
    const batchedIdentity = await refusalOf(identity, SMALL_BATCHES);
    assert.ok(isCoordinatorError(batchedIdentity, 'contribution.identity_pattern_changed'), String(batchedIdentity));
  });

  it('stop when cancelled mid-stream: the sum in flight is the last, and no sums are given', async () => {
    const uncancelled = await streamedSums(delta, SMALL_BATCHES);
    assert.ok(await uncancelled.sums.result(), 'the sums ran to the end');
    const sums = await StreamedCandidateSums.start(key, head, SMALL_BATCHES);
    const out = path.join(scratch, `cancelled-${randomBytes(4).toString('hex')}.zkey`);
    const pieces: Array<[number, number, Uint8Array]> = [];
    await streamSplice(delta, 1 << 16, out, (section, first, points) => {
      for (let at = 0; at < points.length; at += PIECE_POINTS * G1)
        pieces.push([section, first + at / G1, points.slice(at, at + PIECE_POINTS * G1)]);
    });
    for (const [section, first, points] of pieces) sums.add(section, first, points);
    // Cancelled as soon as the first sum is in: the next batch's sum is already on the threads.
    while (sums.sumsRun === 0) await new Promise((resolve) => setImmediate(resolve));
    const atCancel = sums.sumsRun;
    sums.cancel();
    assert.equal(await sums.result(), undefined, 'no sums once cancelled');
    assert.equal(sums.stopped, 'cancelled');
    assert.equal(sums.refusal, undefined, 'a cancel is no refusal');
    assert.ok(sums.sumsRun <= atCancel + 1, `${sums.sumsRun} sums: at most the one in flight after the cancel`);
    assert.ok(
      atCancel + 1 < uncancelled.sums.sumsRun,
      `the cancel came before the end (${atCancel} of ${uncancelled.sums.sumsRun} sums)`,
    );
  });
});
