/**
 * Contributions made with the kernel are standard snarkjs contributions: with a fixed secret
 * (snarkjs's beacon derives it deterministically) the key is byte for byte the one snarkjs writes;
 * with fresh entropy, `snarkjs zkey verify` (verifyFromInit: r1cs + ptau) accepts it, the hash
 * returned is the one snarkjs computes for the file, and `ceremony contribute` (contributeLocally)
 * commits one on every circuit of a ceremony of two test circuits, each accepted by verifyLinkFromHead.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { beaconFast, contributeFast } from '../../core/kernel/contribute-fast.ts';
import { contributeLocally } from '../../core/ceremony/extend-chain.ts';
import { loadCeremonyConfig } from '../../core/config/ceremony-config.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { verifyLinkFromHead } from '../../core/link-check/verify-link-from-head.ts';
import { newCeremonyDir, TEST_BEACON, TEST_BEACON_ITERATIONS, TWO_CIRCUITS } from '../fixtures/ceremony-fixture.ts';
import { cleanUp } from '../helpers/clean-up.ts';

const silent: snarkjs.Logger = { debug() {}, info() {}, warn() {}, error() {} };
let dataDir: string;
let scratch: string;

before(async () => {
  // Two circuits, not the project's nine: the kernel contributes to each alike, and two show that
  // every circuit of the ceremony gets its own valid link.
  dataDir = await newCeremonyDir({ init: true, circuits: TWO_CIRCUITS });
  scratch = await mkdtemp(path.join(tmpdir(), 'fast-contribution-'));
});
after(() => cleanUp(dataDir, scratch));

describe('contributions with the G1 kernel', () => {
  it('with a fixed secret, writes exactly the bytes snarkjs writes', async () => {
    const config = await loadCeremonyConfig(dataDir);
    const circuit = config.circuits[0]!.name;
    const head = ceremonyPaths(dataDir).zkeyPath(circuit, 0);
    const mine = path.join(scratch, 'mine.zkey');
    const theirs = path.join(scratch, 'theirs.zkey');
    const made = await beaconFast(head, mine, 'fixed', TEST_BEACON, TEST_BEACON_ITERATIONS);
    const hash = await snarkjs.zKey.beacon(head, theirs, 'fixed', TEST_BEACON, TEST_BEACON_ITERATIONS);
    assert.ok(made.stats.kernelPoints > 0, 'the kernel did the scaling');
    assert.equal(made.stats.fallbackPoints, 0);
    assert.equal(made.hash, Buffer.from(hash as Uint8Array).toString('hex'));
    assert.ok((await readFile(mine)).equals(await readFile(theirs)), 'the two keys differ');
  });

  it("with fresh entropy, snarkjs zkey verify accepts it and its hash is snarkjs's", async () => {
    const config = await loadCeremonyConfig(dataDir);
    const circuit = config.circuits[0]!;
    const paths = ceremonyPaths(dataDir);
    const out = path.join(scratch, 'fresh.zkey');
    const made = await contributeFast(paths.zkeyPath(circuit.name, 0), out, 'fresh', 'typed entropy', { workers: 2 });
    assert.equal(made.workers, 2);
    assert.ok(made.stats.kernelPoints > 0);
    const r1cs = circuit.r1csPath;
    const ptau = config.ptauPath;
    assert.equal(await snarkjs.zKey.verifyFromR1cs(r1cs, ptau, out, silent), true);
    const link = await verifyLinkFromHead(paths.zkeyPath(circuit.name, 0), out);
    assert.equal(link.contributionHash, made.hash);
  });

  it('ceremony contribute commits a kernel contribution on every circuit, each a valid link', async () => {
    const config = await loadCeremonyConfig(dataDir);
    const paths = ceremonyPaths(dataDir);
    for (const circuit of config.circuits) {
      const accepted = await contributeLocally(dataDir, circuit.name, 'kernel-test');
      assert.equal(accepted.index, 1);
      const link = await verifyLinkFromHead(paths.zkeyPath(circuit.name, 0), accepted.path);
      assert.equal(link.contributionHash, accepted.contributionHash, circuit.name);
    }
  });
});
