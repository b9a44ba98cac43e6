/**
 * Finalise on the kernel (core/finalise/finalise-ceremony.ts): the beacon's L and H scaled by the
 * kernel, the final key checked as the next link of its head. Each final key is byte for byte what
 * `snarkjs zkey beacon` writes on the same head, snarkjs's `zkey verify` accepts it against the r1cs
 * and the ptau, and finalising needs neither the ptau nor contribution 0 (the link check reads only
 * the head and the final key; the check from contribution 0 it replaces read both). The ceremony is
 * of two circuits, the smallest and the largest test circuit (CIRCUITS): finalise does the same for
 * each, and the other seven cost the file 8 s of CPU more (their chains, and snarkjs's beacons).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, rm, unlink } from 'node:fs/promises';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { contributeLocally } from '../../core/ceremony/extend-chain.ts';
import { finaliseCeremony, FINAL_BEACON_NAME } from '../../core/finalise/finalise-ceremony.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { closeMultiExp } from '../../core/kernel/multi-exp.ts';
import { devPtau, newCeremonyDir, TEST_BEACON, TEST_BEACON_ITERATIONS } from '../fixtures/ceremony-fixture.ts';

let dataDir: string;
let scratch: string;
const quiet: snarkjs.Logger = { debug() {}, info() {}, warn() {}, error() {} };
const CIRCUITS = ['register', 'transact84'];

before(async () => {
  dataDir = await newCeremonyDir({ circuits: CIRCUITS, init: true });
  scratch = path.join(dataDir, 'reference');
  for (const circuit of CIRCUITS) await contributeLocally(dataDir, circuit, 'alice');
});

after(async () => {
  await closeMultiExp();
  await releaseBn128();
  await rm(dataDir, { recursive: true, force: true });
});

test('finalise needs neither the ptau nor contribution 0; its keys are byte for byte snarkjs zkey beacon', async () => {
  const state = await openCeremony(dataDir);
  // What a check from contribution 0 would read: gone.
  await unlink(state.config.ptauPath);
  for (const circuit of CIRCUITS) await unlink(state.paths.zkeyPath(circuit, 0));
  await finaliseCeremony(dataDir, { beaconHex: TEST_BEACON, iterationsExp: TEST_BEACON_ITERATIONS });

  await mkdir(scratch, { recursive: true });
  for (const circuit of CIRCUITS) {
    const reference = path.join(scratch, `${circuit}.zkey`);
    const made = await snarkjs.zKey.beacon(
      state.paths.zkeyPath(circuit, 1),
      reference,
      FINAL_BEACON_NAME,
      TEST_BEACON,
      TEST_BEACON_ITERATIONS,
      quiet,
    );
    assert.ok(made, `snarkjs made the reference final key of ${circuit}`);
    assert.ok(
      (await readFile(state.paths.finalZkeyPath(circuit))).equals(await readFile(reference)),
      `the final key of ${circuit} is snarkjs's byte for byte`,
    );
  }
});

test('snarkjs zkey verify accepts the final keys against the r1cs and the ptau', async () => {
  const state = await openCeremony(dataDir);
  const ptau = await devPtau();
  for (const circuit of CIRCUITS) {
    const r1cs = state.config.circuits.find((c) => c.name === circuit)!.r1csPath;
    assert.equal(await snarkjs.zKey.verifyFromR1cs(r1cs, ptau, state.paths.finalZkeyPath(circuit), quiet), true);
  }
});
