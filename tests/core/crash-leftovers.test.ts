/**
 * What a writer killed mid-write leaves behind is removed by the next writer of that folder: a key
 * staged by a killed `ceremony init` (in its chain's folder) by the next init, and a final key
 * staged by a killed `ceremony finalise` (in final/) by the next finalise. At real size each is as
 * large as the key (2.7 GB at 2^22), and a coordinator retrying after crashes would pile them up.
 * The leftovers are named exactly as the writers name their staged files.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { contributeLocally } from '../../core/ceremony/extend-chain.ts';
import { initCeremony } from '../../core/ceremony/init-ceremony.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { finaliseCeremony } from '../../core/finalise/finalise-ceremony.ts';
import { isTempPath, tempPathFor } from '../../core/fs/atomic-write.ts';
import { closeMultiExp } from '../../core/kernel/multi-exp.ts';
import { newCeremonyDir, TEST_BEACON, TEST_BEACON_ITERATIONS } from '../fixtures/ceremony-fixture.ts';

const CIRCUIT = 'register';
let dataDir: string;

before(async () => {
  dataDir = await newCeremonyDir({ circuits: [CIRCUIT] });
});

after(async () => {
  await closeMultiExp();
  await releaseBn128();
  await rm(dataDir, { recursive: true, force: true });
});

async function leaveStaged(target: string): Promise<string> {
  await mkdir(path.dirname(target), { recursive: true });
  const staged = tempPathFor(target);
  await writeFile(staged, Buffer.alloc(64 * 1024, 7));
  return staged;
}

async function tempFilesIn(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter(isTempPath);
}

test('a key a killed init left staged is removed by the next init', async () => {
  const paths = ceremonyPaths(dataDir);
  const staged = await leaveStaged(paths.zkeyPath(CIRCUIT, 0));
  assert.deepEqual(await tempFilesIn(paths.chainDir(CIRCUIT)), [path.basename(staged)]);
  await initCeremony(dataDir);
  assert.deepEqual(await tempFilesIn(paths.chainDir(CIRCUIT)), [], 'the staged key is gone');
  assert.deepEqual(await readdir(paths.chainDir(CIRCUIT)), [path.basename(paths.zkeyPath(CIRCUIT, 0))]);
});

test('a final key a killed finalise left staged is removed by the next finalise', async () => {
  const paths = ceremonyPaths(dataDir);
  await contributeLocally(dataDir, CIRCUIT, 'alice');
  const staged = await leaveStaged(paths.finalZkeyPath(CIRCUIT));
  await finaliseCeremony(dataDir, { beaconHex: TEST_BEACON, iterationsExp: TEST_BEACON_ITERATIONS });
  assert.deepEqual(await tempFilesIn(paths.finalDir), [], `${path.basename(staged)} is gone`);
  assert.ok((await readdir(paths.finalDir)).includes(path.basename(paths.finalZkeyPath(CIRCUIT))));
});
