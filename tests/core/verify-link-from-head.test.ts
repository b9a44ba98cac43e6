/**
 * verifyLinkFromHead against real snarkjs keys: a chain of the `register` circuit (three contributions and
 * a beacon) is accepted link by link with snarkjs's own contribution hashes, in agreement with
 * `zKey.verifyFromInit`; every kind of bad link, most of them crafted by editing bytes at offsets
 * from readZkeyInfo's section map, is refused with its own code.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import type { Bn128Curve } from 'ffjavascript';
import { getBn128 } from '../../core/crypto/bn128.ts';
import { isCoordinatorError, type ErrorCode } from '../../core/errors.ts';
import { verifyLinkFromHead } from '../../core/link-check/verify-link-from-head.ts';
import { readZkeyInfo, SECTION, type ZkeyInfo } from '../../core/zkey/zkey-file.ts';
import type { LinkExpectation } from '../../core/link-check/check-link-structure.ts';
import { devPtau, PROJECT_DATA_DIR, TEST_BEACON, TEST_BEACON_ITERATIONS } from '../fixtures/ceremony-fixture.ts';
import { snarkjsInitialKey } from '../helpers/snarkjs-initial-key.ts';
import { runCli } from '../helpers/run-cli.ts';
import { cleanUp } from '../helpers/clean-up.ts';

const G1_SIZE = 64;
const BEACON: LinkExpectation = { kind: 'beacon', beaconHex: TEST_BEACON, iterationsExp: TEST_BEACON_ITERATIONS };
const silent: snarkjs.Logger = { debug() {}, info() {}, warn() {}, error() {} };

let dir: string;
let ptau: string;
let curve: Bn128Curve;
const key: Record<string, string> = {};
const hash: Record<string, string> = {};

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

async function refusedWith(
  code: ErrorCode,
  prev: string,
  next: string,
  expect?: LinkExpectation,
  sumsDuringStructureCheck = false,
): Promise<void> {
  await assert.rejects(verifyLinkFromHead(prev, next, { expect, sumsDuringStructureCheck }), (error: unknown) => {
    assert.ok(isCoordinatorError(error), `expected a CoordinatorError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return true;
  });
}

/** A copy of `source` with `edit` applied to its bytes, given the source's section map. */
async function tampered(name: string, source: string, edit: (bytes: Buffer, info: ZkeyInfo) => void): Promise<string> {
  const info = await readZkeyInfo(source);
  const bytes = await readFile(source);
  edit(bytes, info);
  const target = path.join(dir, `${name}.zkey`);
  await writeFile(target, bytes);
  return target;
}

function sectionOffset(info: ZkeyInfo, id: number): number {
  return info.sections.get(id)!.offset;
}

/** Offset of the last MPC record of a key (csHash, count, then the records). */
function lastRecordOffset(info: ZkeyInfo): number {
  const records = info.mpc.contributions;
  return sectionOffset(info, SECTION.mpc) + 64 + 4 + records.slice(0, -1).reduce((sum, r) => sum + r.raw.length, 0);
}

before(async () => {
  ptau = await devPtau();
  dir = await mkdtemp(path.join(tmpdir(), 'verify-link-'));
  curve = await getBn128();
  const r1cs = path.join(PROJECT_DATA_DIR, 'circuits', 'register.r1cs');
  const at = (name: string) => (key[name] = path.join(dir, `${name}.zkey`));
  // Contribution 0 of each circuit is snarkjs's zkey new, the same bytes every run: from the fixture cache.
  key.z0 = await snarkjsInitialKey(r1cs, ptau);
  hash.z1 = hex(await snarkjs.zKey.contribute(key.z0!, at('z1'), 'alice', 'entropy one', silent));
  hash.z2 = hex(await snarkjs.zKey.contribute(key.z1!, at('z2'), 'bob', 'entropy two', silent));
  hash.z3 = hex(await snarkjs.zKey.contribute(key.z2!, at('z3'), 'carol', 'entropy three', silent));
  const beaconHash = await snarkjs.zKey.beacon(
    key.z3!,
    at('final'),
    'beacon',
    TEST_BEACON,
    TEST_BEACON_ITERATIONS,
    silent,
  );
  assert.ok(beaconHash);
  hash.final = hex(beaconHash);
  // Built on z1 while z2 became the head.
  await snarkjs.zKey.contribute(key.z1!, at('z2stale'), 'mallory', 'entropy stale', silent);
  const treeUpdate = path.join(PROJECT_DATA_DIR, 'circuits', 'treeUpdate.r1cs');
  key.t0 = await snarkjsInitialKey(treeUpdate, ptau);
  await snarkjs.zKey.contribute(key.t0!, at('t1'), 'alice', 'entropy tree', silent);
});

after(() => cleanUp(dir));

describe('verifyLinkFromHead accepts', () => {
  it('every link of a chain, with the contribution hash snarkjs printed, as verifyFromInit does', async () => {
    const chain = ['z0', 'z1', 'z2', 'z3'];
    for (let i = 1; i < chain.length; i++) {
      const name = chain[i]!;
      const link = await verifyLinkFromHead(key[chain[i - 1]!]!, key[name]!);
      assert.equal(link.index, i);
      assert.equal(link.contributionHash, hash[name]);
      assert.match(link.contributionHash, /^[0-9a-f]{128}$/);
      assert.equal(link.type, 0);
      assert.equal(await snarkjs.zKey.verifyFromInit(key.z0!, ptau, key[name]!, silent), true);
    }
  });

  it('the final beacon link when the beacon is expected', async () => {
    const link = await verifyLinkFromHead(key.z3!, key.final!, { expect: BEACON });
    assert.equal(link.contributionHash, hash.final);
    assert.equal(link.type, 1);
    assert.equal(link.recordedName, 'beacon');
    assert.equal(await snarkjs.zKey.verifyFromInit(key.z0!, ptau, key.final!, silent), true);
  });

  it('from the command line, printing the contribution hash', async () => {
    const run = await runCli(['verify-link', key.z1!, key.z2!]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, `${hash.z2}\n`);
    const beacon = await runCli([
      'verify-link',
      key.z3!,
      key.final!,
      '--beacon',
      TEST_BEACON,
      '--iterations',
      String(TEST_BEACON_ITERATIONS),
    ]);
    assert.equal(beacon.code, 0, beacon.stderr);
    assert.equal(beacon.stdout, `${hash.final}\n`);
  });
});

describe('verifyLinkFromHead refuses', () => {
  it('a truncated file and a file that is not a zkey', async () => {
    const cut = path.join(dir, 'truncated.zkey');
    await copyFile(key.z2!, cut);
    await truncate(cut, 5000);
    await refusedWith('zkey.malformed', key.z1!, cut);
    const text = path.join(dir, 'text.zkey');
    await writeFile(text, 'not a zkey at all, just some text');
    await refusedWith('zkey.malformed', key.z1!, text);
  });

  it('a key of another circuit', () => refusedWith('contribution.wrong_circuit', key.z0!, key.t1!));
  it('a contribution built on an older head', () => refusedWith('contribution.stale', key.z2!, key.z2stale!));
  it('the head re-uploaded', () => refusedWith('contribution.no_new_contribution', key.z2!, key.z2!));
  it('two new contributions at once', () => refusedWith('contribution.multiple_new_contributions', key.z1!, key.z3!));
  it('a beacon link when a random contribution is expected', () =>
    refusedWith('contribution.unexpected_type', key.z3!, key.final!));
  it('a beacon link with another beacon than expected', () =>
    refusedWith('finalise.beacon_mismatch', key.z3!, key.final!, {
      ...BEACON,
      beaconHex: TEST_BEACON.replace(/^5f/, '60'),
    }));

  it('a contribution that leaves delta unchanged', async () => {
    const prev = await readZkeyInfo(key.z1!);
    const file = await tampered('delta-unchanged', key.z2!, (bytes, info) => {
      prev.header.delta1.copy(bytes, lastRecordOffset(info));
    });
    await refusedWith('contribution.delta_unchanged', key.z1!, file);
  });

  it('a tampered header', async () => {
    const file = await tampered('header', key.z2!, (bytes, info) => {
      bytes[sectionOffset(info, SECTION.grothHeader) + 4 + 32 + 4 + 32 + 12 + 5]! ^= 1; // inside alpha1
    });
    await refusedWith('contribution.header_mismatch', key.z1!, file);
  });

  it('delta2 that is not delta1 in G2', async () => {
    const prev = await readZkeyInfo(key.z1!);
    const file = await tampered('delta2', key.z2!, (bytes, info) => {
      const header = info.sections.get(SECTION.grothHeader)!;
      prev.header.delta2.copy(bytes, header.offset + header.size - 128);
    });
    await refusedWith('contribution.delta_mismatch', key.z1!, file);
  });

  it('an L point replaced by another valid point', async () => {
    const file = await tampered('l-replaced', key.z2!, (bytes, info) => {
      const l = sectionOffset(info, SECTION.l);
      bytes.copy(bytes, l, l + G1_SIZE, l + 2 * G1_SIZE);
    });
    await refusedWith('contribution.l_section_invalid', key.z1!, file);
    assert.equal(await snarkjs.zKey.verifyFromInit(key.z0!, ptau, file, silent), false);
  });

  it('two H points swapped', async () => {
    const file = await tampered('h-swapped', key.z2!, (bytes, info) => {
      const h = sectionOffset(info, SECTION.h);
      const first = Buffer.from(bytes.subarray(h, h + G1_SIZE));
      bytes.copy(bytes, h, h + G1_SIZE, h + 2 * G1_SIZE);
      first.copy(bytes, h + G1_SIZE);
    });
    await refusedWith('contribution.h_section_invalid', key.z1!, file);
  });

  it('L scaled by a wrong factor (every point doubled)', async () => {
    const file = await tampered('l-doubled', key.z2!, (bytes, info) => {
      const { offset, size } = info.sections.get(SECTION.l)!;
      for (let p = offset; p < offset + size; p += G1_SIZE) {
        const point = curve.G1.fromRprLEM(bytes, p);
        curve.G1.toRprLEM(bytes, p, curve.G1.toAffine(curve.G1.add(point, point)));
      }
    });
    await refusedWith('contribution.l_section_invalid', key.z1!, file);
  });

  it('an L point off the curve', async () => {
    const file = await tampered('off-curve', key.z2!, (bytes, info) => {
      bytes[sectionOffset(info, SECTION.l) + 3 * G1_SIZE + 32]! ^= 1; // lowest byte of point 3's y
    });
    await refusedWith('contribution.point_not_on_curve', key.z1!, file);
  });

  it('with the sums started beside the structure check (the CLI), a structure refusal still comes first', async () => {
    // The head re-uploaded with an L point off the curve: the sums fail too, after the structure.
    const file = await tampered('no-new-and-off-curve', key.z2!, (bytes, info) => {
      bytes[sectionOffset(info, SECTION.l) + 3 * G1_SIZE + 32]! ^= 1;
    });
    await refusedWith('contribution.no_new_contribution', key.z2!, file, undefined, true);
    await refusedWith('contribution.stale', key.z2!, key.z2stale!, undefined, true);
    await refusedWith(
      'contribution.point_not_on_curve',
      key.z1!,
      await tampered('off-curve-2', key.z2!, (bytes, info) => {
        bytes[sectionOffset(info, SECTION.l) + 3 * G1_SIZE + 32]! ^= 1;
      }),
      undefined,
      true,
    );
  });

  it('a forged proof of knowledge: g1_sx changed', async () => {
    const file = await tampered('forged-g1sx', key.z2!, (bytes, info) => {
      const record = lastRecordOffset(info);
      bytes.copy(bytes, record + 2 * G1_SIZE, record + G1_SIZE, record + 2 * G1_SIZE); // g1_sx := g1_s
    });
    await refusedWith('contribution.invalid_proof_of_knowledge', key.z1!, file);
  });

  it('a forged proof of knowledge: g2_spx replaced by another G2 point', async () => {
    const prev = await readZkeyInfo(key.z1!);
    const file = await tampered('forged-g2spx', key.z2!, (bytes, info) => {
      prev.header.delta2.copy(bytes, lastRecordOffset(info) + 3 * G1_SIZE);
    });
    await refusedWith('contribution.invalid_proof_of_knowledge', key.z1!, file);
  });

  it('a beacon record whose key does not derive from its beacon', async () => {
    const final = await readZkeyInfo(key.final!);
    const beaconHash = final.mpc.contributions.at(-1)!.beaconHash!;
    const file = await tampered('forged-beacon', key.final!, (bytes, info) => {
      const record = Buffer.from(bytes.subarray(lastRecordOffset(info)));
      const at = lastRecordOffset(info) + record.indexOf(beaconHash);
      bytes[at]! ^= 1;
    });
    const forgedBeacon = Buffer.from(beaconHash);
    forgedBeacon[0]! ^= 1;
    await refusedWith('contribution.invalid_proof_of_knowledge', key.z3!, file, {
      ...BEACON,
      beaconHex: forgedBeacon.toString('hex'),
    });
  });

  it('from the command line, with the code', async () => {
    const file = path.join(dir, 'l-doubled.zkey');
    const run = await runCli(['verify-link', key.z1!, file]);
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^error \[contribution\.l_section_invalid\]: /);
  });
});
