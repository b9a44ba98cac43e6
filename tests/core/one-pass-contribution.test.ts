/**
 * A contribution made in one pass (core/delta/one-pass-contribution.ts): the head's skeleton read as
 * a stream is what the coordinator serves; the beacon made this way is byte for byte snarkjs's
 * `zkey beacon` (run with the kernel under it, itself tested against snarkjs alone), its hashes are
 * those of its bytes, and its sums are the new key's: the link check passes on them and refuses them
 * for another beacon's key, and refuses a contribution hash other than the one the record gave. A
 * contribution with fresh entropy is a key snarkjs verifies. A beacon snarkjs refuses leaves no
 * file; a staged file a crash left is replaced. The local `ceremony contribute` refuses a head whose
 * fixed sections changed on disk since its commit, and leaves the chain as it was.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { contributeLocally } from '../../core/ceremony/extend-chain.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { loadCeremonyConfig } from '../../core/config/ceremony-config.ts';
import { contributeInOnePass, verifyOnePassLink } from '../../core/delta/one-pass-contribution.ts';
import { skeletonStream } from '../../core/delta/skeleton-zkey.ts';
import { isCoordinatorError } from '../../core/errors.ts';
import { beaconFast, beaconRecord, contributionRecord } from '../../core/kernel/contribute-fast.ts';
import { hashKeyFile } from '../../core/zkey/zkey-hashes.ts';
import { SECTION } from '../../core/zkey/zkey-file.ts';
import { TEST_BEACON, TEST_BEACON_ITERATIONS } from '../fixtures/ceremony-fixture.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { headWithSkeleton } from '../helpers/head-skeleton.ts';
import { sectionOffset, tamperedCopy } from '../helpers/zkey-tamper.ts';

const OTHER_BEACON = 'ff'.repeat(32);
const BEACON = { kind: 'beacon' as const, beaconHex: TEST_BEACON, iterationsExp: TEST_BEACON_ITERATIONS };
let dataDir: string;
let scratch: string;
let head: string;
let skeleton: string;

before(async () => {
  ({ dataDir, scratch, head, skeleton } = await headWithSkeleton('one-pass-'));
});
after(() => cleanUp(dataDir, scratch));

async function streamBytes(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const part of stream) parts.push(part);
  return Buffer.concat(parts);
}

function beaconInOnePass(outPath: string, beaconHex: string, options: { circuitKey?: Uint8Array } = {}) {
  return contributeInOnePass({
    headPath: head,
    outPath,
    makeRecord: (smallKey) => beaconRecord(smallKey, 'Final beacon', beaconHex, TEST_BEACON_ITERATIONS),
    ...options,
  });
}

describe('a contribution made in one pass', () => {
  it('reads the head as the skeleton the coordinator serves', async () => {
    assert.deepEqual(await streamBytes(skeletonStream(head)), await readFile(skeleton));
  });

  it("writes snarkjs's beacon byte for byte, with its hashes and sums taken on the way", async () => {
    const expected = path.join(scratch, 'snarkjs-beacon.zkey');
    const snarkjsMade = await beaconFast(head, expected, 'Final beacon', TEST_BEACON, TEST_BEACON_ITERATIONS);
    const key = randomBytes(32);
    const out = path.join(scratch, 'one-pass.zkey');
    // A staged key a crash left behind is replaced, not appended to or refused.
    await writeFile(out, 'left by a crash');
    let scaled = 0;
    let points = 0;
    const made = await contributeInOnePass({
      headPath: head,
      outPath: out,
      makeRecord: (smallKey) => beaconRecord(smallKey, 'Final beacon', TEST_BEACON, TEST_BEACON_ITERATIONS),
      circuitKey: key,
      workers: 2,
      onScaled: (done, total) => ([scaled, points] = [done, total]),
    });
    assert.deepEqual(await readFile(out), await readFile(expected));
    assert.equal(made.contributionHash, snarkjsMade.hash);
    const hashes = await hashKeyFile(out, 'the final key');
    assert.equal(made.fileHash, hashes.fileHash);
    assert.deepEqual(made.sectionHashes, hashes.sectionHashes);
    assert.ok(points > 0 && scaled === points, `every point scaled once (${scaled} of ${points})`);
    assert.ok(made.sums, 'the sums ran to the end');

    const link = await verifyOnePassLink(head, out, made, { challenge: { key }, expect: BEACON });
    assert.equal(link.contributionHash, snarkjsMade.hash);
    // The hash shown and recorded is the record's: a pass that reports another is refused.
    const reported = { ...made, contributionHash: '00'.repeat(64) };
    await assert.rejects(
      verifyOnePassLink(head, out, reported, { challenge: { key }, expect: BEACON }),
      /another contribution hash/,
    );
    // The sums of another beacon's key, under the same circuit key, do not pass for this one.
    const other = await beaconInOnePass(path.join(scratch, 'other.zkey'), OTHER_BEACON, { circuitKey: key });
    await assert.rejects(
      verifyOnePassLink(head, out, { ...made, sums: other.sums! }, { challenge: { key }, expect: BEACON }),
      (error) => isCoordinatorError(error, 'contribution.l_section_invalid'),
    );
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
      contributeInOnePass({
        headPath: head,
        outPath: out,
        makeRecord: (smallKey) => beaconRecord(smallKey, 'x', TEST_BEACON, 5),
      }),
      /snarkjs refused the beacon/,
    );
    await assert.rejects(stat(out), 'no final key is left behind');
  });

  // Last: it changes the head on disk.
  it('the local contribute refuses a head whose A section changed on disk since its commit', async () => {
    const circuit = (await loadCeremonyConfig(dataDir)).circuits[0]!.name;
    await tamperedCopy(head, head, (bytes, info) => {
      bytes[sectionOffset(info, SECTION.a) + 5]! ^= 1;
    });
    await assert.rejects(contributeLocally(dataDir, circuit, 'after the change'), (error) => {
      assert.ok(isCoordinatorError(error, 'contribution.header_mismatch'), String(error));
      assert.match((error as Error).message, /A section differs from the chain head/);
      return true;
    });
    const state = await openCeremony(dataDir);
    assert.equal(state.chains.get(circuit)!.headIndex, 0, 'the chain did not move');
    const chainDir = state.paths.chainDir(circuit);
    assert.deepEqual(
      (await readdir(chainDir)).filter((name) => name.startsWith('.')),
      [],
      'no staged key is left behind',
    );
  });
});
