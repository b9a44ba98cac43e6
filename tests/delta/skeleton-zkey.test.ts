/**
 * The skeleton (zkey-delta-v2, and v1 still taken) carries everything a contribution reads or
 * changes: the kernel contribution run on the head's skeleton, spliced back onto the head, is byte
 * for byte the key the same contribution makes on the full head (a deterministic beacon secret
 * stands in for entropy) in either version's order, snarkjs's own contribution on a skeleton
 * splices into a key snarkjs verifies, and so does a streamed delta (core/delta/streamed-delta.ts,
 * in v2's order) made while the inputs arrive in chunks. Skeletons that are not a contribution on
 * top of the head, or not in their version's order, are refused with `delta.malformed`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile, stat } from 'node:fs/promises';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { beaconFast, contributeFast, contributionRecord } from '../../core/kernel/contribute-fast.ts';
import { loadCeremonyConfig } from '../../core/config/ceremony-config.ts';
import { spliceSkeleton } from '../../core/delta/skeleton-zkey.ts';
import { DELTA_FORMAT, DELTA_FORMAT_V1 } from '../../core/delta/delta-format.ts';
import { ExactReader } from '../../core/delta/exact-reader.ts';
import { startStreamedDelta, UPLOAD_CHUNK_BYTES } from '../../core/delta/streamed-delta.ts';
import { nodeScalePool } from '../../core/kernel/node-scale-pool.ts';
import { readZkeyInfo } from '../../core/zkey/zkey-file.ts';
import { contributionHash } from '../../core/zkey/contribution-hash.ts';
import { getBn128 } from '../../core/crypto/bn128.ts';
import { isCoordinatorError } from '../../core/errors.ts';
import { TEST_BEACON, TEST_BEACON_ITERATIONS } from '../fixtures/ceremony-fixture.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { headWithSkeleton } from '../helpers/head-skeleton.ts';
import { editSections, inDeltaV2Order, sectionOf, splitSections } from '../helpers/zkey-tamper.ts';

const silent: snarkjs.Logger = { debug() {}, info() {}, warn() {}, error() {} };
let dataDir: string;
let scratch: string;
let head: string;
let headSkeleton: string;
let deltaSkeleton: string;

before(async () => {
  ({ dataDir, scratch, head, skeleton: headSkeleton } = await headWithSkeleton('skeleton-zkey-'));
  deltaSkeleton = path.join(scratch, 'delta.skeleton');
  await beaconFast(headSkeleton, deltaSkeleton, 'fixed', TEST_BEACON, TEST_BEACON_ITERATIONS);
});
after(() => cleanUp(dataDir, scratch));

async function refusal(
  bytes: Buffer,
  format: typeof DELTA_FORMAT | typeof DELTA_FORMAT_V1 = DELTA_FORMAT_V1,
): Promise<string> {
  const tampered = path.join(scratch, 'tampered.skeleton');
  await writeFile(tampered, bytes);
  let message = '';
  await assert.rejects(spliceSkeleton(head, tampered, path.join(scratch, 'never.zkey'), format), (error) => {
    assert.ok(isCoordinatorError(error, 'delta.malformed'), String(error));
    message = error.message;
    return true;
  });
  await assert.rejects(stat(path.join(scratch, 'never.zkey')), 'no key is written');
  return message;
}

describe('contribution skeletons (zkey-delta-v2, v1)', () => {
  it('the skeleton keeps every section of the head, sections 3 to 7 empty, L and H last', async () => {
    const full = splitSections(await readFile(head));
    const skeleton = splitSections(await readFile(headSkeleton));
    const fullIds = full.sections.map((s) => s.id);
    assert.deepEqual(
      skeleton.sections.map((s) => s.id),
      [...fullIds.filter((id) => id !== 8 && id !== 9), 8, 9],
    );
    for (const section of skeleton.sections) {
      const expected = [3, 4, 5, 6, 7].includes(section.id) ? Buffer.alloc(0) : sectionOf(full, section.id).data;
      assert.ok(section.data.equals(expected), `section ${section.id}`);
    }
    const sizes = { skeleton: (await stat(headSkeleton)).size, key: (await stat(head)).size };
    assert.ok(sizes.skeleton < sizes.key, JSON.stringify(sizes));
  });

  it('a contribution on the skeleton, spliced, is byte for byte the contribution on the full head', async () => {
    const spliced = path.join(scratch, 'spliced.zkey');
    const direct = path.join(scratch, 'direct.zkey');
    await spliceSkeleton(head, deltaSkeleton, spliced, DELTA_FORMAT_V1);
    await beaconFast(head, direct, 'fixed', TEST_BEACON, TEST_BEACON_ITERATIONS);
    assert.ok((await readFile(spliced)).equals(await readFile(direct)), 'the two keys differ');
    // The same delta with its record before L and H (v2) splices into the same bytes.
    const v2 = path.join(scratch, 'delta-v2.skeleton');
    const splicedV2 = path.join(scratch, 'spliced-v2.zkey');
    await writeFile(v2, inDeltaV2Order(await readFile(deltaSkeleton)));
    await spliceSkeleton(head, v2, splicedV2, DELTA_FORMAT);
    assert.ok((await readFile(splicedV2)).equals(await readFile(direct)), 'the v2 delta splices into other bytes');
  });

  it("snarkjs's and the kernel's contributions with entropy on a skeleton splice into valid keys", async () => {
    const config = await loadCeremonyConfig(dataDir);
    const circuit = config.circuits[0]!;
    for (const contribute of [
      (out: string) => contributeFast(headSkeleton, out, 'fresh', 'typed entropy', { workers: 2 }),
      (out: string) => snarkjs.zKey.contribute(headSkeleton, out, 'fresh', 'typed entropy', silent),
    ]) {
      const delta = path.join(scratch, 'fresh.skeleton');
      const spliced = path.join(scratch, 'fresh.zkey');
      await contribute(delta);
      await spliceSkeleton(head, delta, spliced, DELTA_FORMAT_V1);
      assert.equal(await snarkjs.zKey.verifyFromR1cs(circuit.r1csPath, config.ptauPath, spliced, silent), true);
    }
  });

  it('a streamed delta (record first, L and H scaled as they arrive) splices into a valid key', async () => {
    const config = await loadCeremonyConfig(dataDir);
    const circuit = config.circuits[0]!;
    const inputs = await readFile(headSkeleton);
    // The inputs as a network delivers them: chunks of an arbitrary size.
    let at = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= inputs.length) return controller.close();
        controller.enqueue(new Uint8Array(inputs.subarray(at, at + 7000)));
        at += 7000;
      },
    });
    const pool = await nodeScalePool(2);
    try {
      let scaled = 0;
      let points = 0;
      const delta = await startStreamedDelta({
        reader: new ExactReader(body),
        scaler: pool,
        makeRecord: (smallKey) => contributionRecord(smallKey, 'streamed', 'typed entropy'),
        onPoints: (total) => (points = total),
        onScaled: (done) => (scaled = done),
      });
      const parts: Uint8Array[] = [];
      for (let offset = 0; offset < delta.source.size;) {
        const { value } = await delta.source.slice(offset, offset + UPLOAD_CHUNK_BYTES);
        assert.ok(value, `the source ended at ${offset} of ${delta.source.size}`);
        parts.push(value.slice());
        offset += value.byteLength;
      }
      assert.equal(scaled, points, 'every point of L and H scaled once');
      const streamed = path.join(scratch, 'streamed.skeleton');
      const spliced = path.join(scratch, 'streamed.zkey');
      await writeFile(streamed, Buffer.concat(parts));
      assert.deepEqual(
        splitSections(await readFile(streamed)).sections.map((section) => section.id),
        [1, 2, 3, 4, 5, 6, 7, 10, 8, 9],
        'the record comes before L and H',
      );
      await spliceSkeleton(head, streamed, spliced, DELTA_FORMAT);
      assert.equal(await snarkjs.zKey.verifyFromR1cs(circuit.r1csPath, config.ptauPath, spliced, silent), true);
      const { mpc } = await readZkeyInfo(spliced);
      assert.equal(contributionHash(await getBn128(), mpc.contributions.at(-1)!), delta.hash, 'the record’s hash');
    } finally {
      pool.close();
    }
  });

  it('refuses a skeleton made on an earlier head as delta.stale_head, naming both heads', async () => {
    const next = path.join(scratch, 'next.zkey');
    await spliceSkeleton(head, deltaSkeleton, next, DELTA_FORMAT_V1);
    await assert.rejects(
      spliceSkeleton(next, deltaSkeleton, path.join(scratch, 'never.zkey'), DELTA_FORMAT_V1),
      (error) => {
        assert.ok(isCoordinatorError(error, 'delta.stale_head'), String(error));
        assert.match(error.message, /made on contribution 0, but the head is now contribution 1/);
        return true;
      },
    );
  });

  it('refuses skeletons that are not one contribution on top of the head', async () => {
    const good = await readFile(deltaSkeleton);
    const headFile = splitSections(await readFile(head));
    const edit = (change: Parameters<typeof editSections>[1]): Buffer => editSections(good, change);
    const byId = sectionOf;
    assert.match(await refusal(edit((f) => (byId(f, 3).data = byId(headFile, 3).data))), /section 3 must be empty/);
    assert.match(await refusal(edit((f) => (byId(f, 1).data[0]! ^= 1))), /section 1/);
    assert.match(await refusal(edit((f) => f.sections.reverse())), /order/);
    assert.match(await refusal(edit((f) => (byId(f, 9).data = byId(f, 9).data.subarray(1)))), /section 9/);
    assert.match(await refusal(edit((f) => (byId(f, 10).data = byId(headFile, 10).data))), /section 10/);
    assert.match(await refusal(edit((f) => (byId(f, 10).data[5]! ^= 1))), /section 10/);
    assert.match(await refusal((await readFile(deltaSkeleton)).subarray(0, 100)), /truncated/);
    // As many empty sections as the skeleton's length holds: refused on the count, before any entry is read.
    const emptySections = Buffer.alloc(good.length);
    good.copy(emptySections, 0, 0, 8);
    const declared = Math.floor((good.length - 12) / 12);
    emptySections.writeUInt32LE(declared, 8);
    for (let i = 0; i < declared; i++) emptySections.writeUInt32LE(i + 1, 12 + 12 * i);
    assert.match(await refusal(emptySections), new RegExp(`expected 10 sections, found ${declared}$`));
    // Each version in its own order only.
    assert.match(await refusal(good, DELTA_FORMAT), /in the order of zkey-delta-v2/);
    assert.match(await refusal(inDeltaV2Order(good), DELTA_FORMAT_V1), /in the order of zkey-delta-v1/);
  });
});
