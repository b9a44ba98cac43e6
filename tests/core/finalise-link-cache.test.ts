/**
 * The coordinator's link cache on its own commands: a local contribution (`contributeLocally`)
 * checks its link under the circuit key and leaves both keys' combinations in the cache, and
 * finalise checks the final key against the head's cached combination (two MSMs instead of four).
 * The cached entry is really what finalise relies on: one that authenticates but holds another
 * point makes finalise refuse its own beacon, and the right one lets it through.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { contributeLocally } from '../../core/ceremony/extend-chain.ts';
import { finaliseCeremony } from '../../core/finalise/finalise-ceremony.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { isCoordinatorError } from '../../core/errors.ts';
import { closeMultiExp } from '../../core/kernel/multi-exp.ts';
import { circuitChallengeKey, linkChallengeSeed, stateDirFor } from '../../core/link-check/link-challenge.ts';
import { readCachedCombination, writeCachedCombination } from '../../core/link-check/link-combination-cache.ts';
import { linkCombinationOf } from '../../core/link-check/verify-link-from-head.ts';
import { newCeremonyDir, TEST_BEACON, TEST_BEACON_ITERATIONS } from '../fixtures/ceremony-fixture.ts';

const CIRCUIT = 'register';
let dataDir: string;

before(async () => {
  dataDir = await newCeremonyDir({ init: true, circuits: [CIRCUIT] });
});

after(async () => {
  await closeMultiExp();
  await releaseBn128();
  await rm(dataDir, { recursive: true, force: true });
});

test('a local contribution caches both keys of its link; finalise relies on the head entry', async () => {
  const accepted = await contributeLocally(dataDir, CIRCUIT, 'alice');
  const state = await openCeremony(dataDir);
  const chain = state.chains.get(CIRCUIT)!;
  const stateDir = stateDirFor(dataDir);
  const key = circuitChallengeKey(await linkChallengeSeed(stateDir), CIRCUIT);
  const headPath = state.paths.zkeyPath(CIRCUIT, 1);
  const head = await readCachedCombination(stateDir, key, accepted.fileHash);
  assert.deepEqual(head, await linkCombinationOf(headPath, key), "the new head's entry");
  assert.deepEqual(
    await readCachedCombination(stateDir, key, chain.init!.fileHash),
    await linkCombinationOf(state.paths.zkeyPath(CIRCUIT, 0), key),
    "contribution 0's entry, computed by the same check",
  );

  // An entry under the right key and file hash, but of another point: H's sum replaced by L's (the
  // check adds the two, so a swap of L and H would go unnoticed, and rightly: it sums L‖H).
  await writeCachedCombination(stateDir, key, accepted.fileHash, { ...head!, h: head!.l });
  await assert.rejects(
    finaliseCeremony(dataDir, { beaconHex: TEST_BEACON, iterationsExp: TEST_BEACON_ITERATIONS }),
    (error: unknown) => isCoordinatorError(error) && error.code === 'finalise.verification_failed',
  );
  await writeCachedCombination(stateDir, key, accepted.fileHash, head!);
  await finaliseCeremony(dataDir, { beaconHex: TEST_BEACON, iterationsExp: TEST_BEACON_ITERATIONS });
  assert.ok((await openCeremony(dataDir)).chains.get(CIRCUIT)!.beacon, 'finalised with the right entry');
});
