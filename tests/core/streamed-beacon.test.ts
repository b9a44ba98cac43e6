/**
 * The beacon made in one pass (core/finalise/streamed-beacon.ts): the head's skeleton read as a
 * stream is what the coordinator serves; the final key is byte for byte snarkjs's `zkey beacon`
 * (run with the kernel under it, itself tested against snarkjs alone), its hashes are those of its
 * bytes, and its sums are the final key's: the link check passes on them and refuses them for
 * another beacon's key. A beacon snarkjs refuses leaves no file; a staged file a crash left is
 * replaced. A contribution with fresh entropy made the same way (the local `ceremony contribute`)
 * is a key snarkjs verifies.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { loadCeremonyConfig } from '../../core/config/ceremony-config.ts';
import { contributeInOnePass } from '../../core/delta/one-pass-contribution.ts';
import { skeletonStream } from '../../core/delta/skeleton-zkey.ts';
import { beaconStreamed } from '../../core/finalise/streamed-beacon.ts';
import { beaconFast, contributionRecord } from '../../core/kernel/contribute-fast.ts';
import { verifyLinkFromHead } from '../../core/link-check/verify-link-from-head.ts';
import { hashKeyFile } from '../../core/zkey/zkey-hashes.ts';
import { TEST_BEACON, TEST_BEACON_ITERATIONS } from '../fixtures/ceremony-fixture.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { headWithSkeleton } from '../helpers/head-skeleton.ts';

const OTHER_BEACON = 'ff'.repeat(32);
let dataDir: string;
let scratch: string;
let head: string;
let skeleton: string;

before(async () => {
  ({ dataDir, scratch, head, skeleton } = await headWithSkeleton('streamed-beacon-'));
});
after(() => cleanUp(dataDir, scratch));

async function streamBytes(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const part of stream) parts.push(part);
  return Buffer.concat(parts);
}

describe('the beacon made in one pass', () => {
  it('reads the head as the skeleton the coordinator serves', async () => {
    assert.deepEqual(await streamBytes(skeletonStream(head)), await readFile(skeleton));
  });

  it("writes snarkjs's beacon byte for byte, with its hashes and sums taken on the way", async () => {
    const expected = path.join(scratch, 'snarkjs-beacon.zkey');
    const made = await beaconFast(head, expected, 'Final beacon', TEST_BEACON, TEST_BEACON_ITERATIONS);
    const key = randomBytes(32);
    const out = path.join(scratch, 'streamed.zkey');
    // A staged key a crash left behind is replaced, not appended to or refused.
    await writeFile(out, 'left by a crash');
    let points = 0;
    let scaled = 0;
    const streamed = await beaconStreamed({
      headPath: head,
      outPath: out,
      name: 'Final beacon',
      beaconHex: TEST_BEACON,
      iterationsExp: TEST_BEACON_ITERATIONS,
      circuitKey: key,
      workers: 2,
      onPoints: (total) => (points = total),
      onScaled: (done) => (scaled = done),
    });
    assert.deepEqual(await readFile(out), await readFile(expected));
    assert.equal(streamed.contributionHash, made.hash);
    const hashes = await hashKeyFile(out, 'the final key');
    assert.equal(streamed.fileHash, hashes.fileHash);
    assert.deepEqual(streamed.sectionHashes, hashes.sectionHashes);
    assert.ok(points > 0 && scaled === points, `every point scaled once (${scaled} of ${points})`);
    assert.ok(streamed.sums, 'the sums ran to the end');

    const expect = { kind: 'beacon' as const, beaconHex: TEST_BEACON, iterationsExp: TEST_BEACON_ITERATIONS };
    const link = await verifyLinkFromHead(head, out, { challenge: { key, next: streamed.sums }, expect });
    assert.equal(link.contributionHash, made.hash);

    // The sums of another beacon's key, under the same circuit key, do not pass for this one.
    const other = await beaconStreamed({
      headPath: head,
      outPath: path.join(scratch, 'other.zkey'),
      name: 'Final beacon',
      beaconHex: OTHER_BEACON,
      iterationsExp: TEST_BEACON_ITERATIONS,
      circuitKey: key,
    });
    await assert.rejects(verifyLinkFromHead(head, out, { challenge: { key, next: other.sums! }, expect }));
  });

  it('makes a contribution with fresh entropy that snarkjs verifies', async () => {
    const config = await loadCeremonyConfig(dataDir);
    const out = path.join(scratch, 'contribution.zkey');
    const made = await contributeInOnePass({
      headPath: head,
      outPath: out,
      makeRecord: (smallKey) => contributionRecord(smallKey, 'one pass', randomBytes(32).toString('hex')),
    });
    assert.equal(made.sums, undefined, 'no circuit key, no sums');
    const silent = { debug() {}, info() {}, warn() {}, error() {} };
    assert.equal(await snarkjs.zKey.verifyFromR1cs(config.circuits[0]!.r1csPath, config.ptauPath, out, silent), true);
    assert.equal(made.fileHash, (await hashKeyFile(out, 'the contribution')).fileHash);
  });

  it('refuses a beacon snarkjs refuses and leaves no file', async () => {
    const out = path.join(scratch, 'refused.zkey');
    await assert.rejects(
      beaconStreamed({ headPath: head, outPath: out, name: 'x', beaconHex: TEST_BEACON, iterationsExp: 5 }),
      /snarkjs refused the beacon/,
    );
    await assert.rejects(stat(out), 'no final key is left behind');
  });
});
