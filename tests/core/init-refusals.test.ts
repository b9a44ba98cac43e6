/**
 * `ceremony init` and the configuration refuse what would make a wrong ceremony, each with a
 * message that names the problem, and write nothing when they refuse.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { devPtau, devPtauHash, newCeremonyDir } from '../fixtures/ceremony-fixture.ts';
import { runCli } from '../helpers/run-cli.ts';
import { joined } from '../helpers/joined-regex.ts';
import * as snarkjs from 'snarkjs';
import { getBn128, releaseBn128 } from '../../core/crypto/bn128.ts';
import { createDevPtau } from '../../core/ptau/dev-ptau.ts';
import { readPtauSummary } from '../../core/ptau/ptau-header.ts';

const dirs: string[] = [];
async function ceremonyDir(overrides?: Record<string, unknown>): Promise<string> {
  const dir = await newCeremonyDir({ configOverrides: overrides });
  dirs.push(dir);
  return dir;
}

async function editConfig(dir: string, edit: (config: any) => void): Promise<void> {
  const file = path.join(dir, 'ceremony.json');
  const config = JSON.parse(await readFile(file, 'utf8'));
  edit(config);
  await writeFile(file, JSON.stringify(config));
}

after(async () => {
  await releaseBn128();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/**
 * The folder's names but the writers' lock (core/data-folder/kernel-lock.ts): its empty file stays
 * once made, since removing it would let two processes lock two files of one name.
 */
async function namesInFolder(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name !== '.ceremony-writer.lock').sort();
}

test('a circuit whose public-input count differs from the configuration is refused, naming both numbers', async () => {
  const dir = await ceremonyDir();
  await editConfig(dir, (config) => {
    config.circuits[2].publicInputs = 13;
  });
  const result = await runCli(['init', '--data', dir]);
  assert.equal(result.code, 1);
  assert.match(
    result.stderr,
    /error \[circuit\.public_inputs_mismatch\]: circuit transact21: .* has 12 public inputs, the configuration says 13/,
  );
  assert.deepEqual(await namesInFolder(dir), ['ceremony.json', 'circuits', 'ptau'], 'nothing may be written');
});

test('a ptau too small for a circuit is refused, naming the circuit and both powers', async () => {
  const dir = await ceremonyDir();
  const small = path.join(dir, 'ptau', 'small.ptau');
  await createDevPtau(8, small);
  await editConfig(dir, (config) => {
    config.ptau = 'ptau/small.ptau';
  });
  const result = await runCli(['init', '--data', dir]);
  assert.equal(result.code, 1);
  assert.match(
    result.stderr,
    /error \[ptau\.too_small\]: circuit register .* needs a powers of tau of power 9; ptau\/small\.ptau has power 8/,
  );
});

test('the development ptau is marked insecure and refused for a ceremony that is not a test network', async () => {
  assert.equal((await readPtauSummary(await devPtau())).insecure, true);
  const dir = await ceremonyDir({ testNetwork: false });
  const result = await runCli(['init', '--data', dir]);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /error \[ptau\.insecure\]/);
});

test('a ptau other than the one ceremony.json pins (ptauHash) is refused, and nothing is written', async () => {
  const dir = await ceremonyDir({ ptauHash: 'ef'.repeat(64) });
  const refused = await runCli(['init', '--data', dir]);
  assert.equal(refused.code, 1);
  assert.match(
    refused.stderr,
    joined(
      'm',
      /^error \[ptau\.hash_mismatch\]: ptau\/dev-pot10-insecure\.ptau has BLAKE2b-512 [0-9a-f]{128}; /,
      /ceremony\.json pins (ef){64}$/,
    ),
  );
  assert.deepEqual(await namesInFolder(dir), ['ceremony.json', 'circuits', 'ptau'], 'nothing may be written');
  const pin = await devPtauHash();
  await editConfig(dir, (config) => (config.ptauHash = pin.toUpperCase()));
  const accepted = await runCli(['init', '--data', dir]);
  assert.equal(accepted.code, 0, accepted.stderr);
});

test('a ptau that was not prepared for phase 2 is refused', async () => {
  const dir = await ceremonyDir();
  const config = JSON.parse(await readFile(path.join(dir, 'ceremony.json'), 'utf8'));
  // A raw phase-1 file: the header says power 10 but the phase 2 sections are absent.
  const raw = path.join(dir, 'ptau', 'raw.ptau');
  await snarkjs.powersOfTau.newAccumulator(await getBn128(), 10, raw);
  await unlink(path.join(dir, config.ptau));
  await symlink(raw, path.join(dir, config.ptau));
  const result = await runCli(['init', '--data', dir]);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /error \[ptau\.not_prepared\]/);
});

test('an invalid configuration names the bad field', async () => {
  const dir = await ceremonyDir();
  await editConfig(dir, (config) => {
    config.circuits[1].verifier = 'not a contract';
    delete config.ptau;
  });
  const result = await runCli(['init', '--data', dir]);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /error \[config\.invalid\]/);
  assert.match(result.stderr, /ptau: Required/);
  assert.match(result.stderr, /circuits\.1\.verifier: a verifier name is a Solidity contract name/);
});

test('a missing configuration says where it looked', async () => {
  const result = await runCli(['init', '--data', '/nonexistent-ceremony-folder']);
  assert.equal(result.code, 1);
  assert.match(
    result.stderr,
    /error \[config\.not_found\]: no ceremony configuration at \/nonexistent-ceremony-folder\/ceremony\.json/,
  );
});

test(
  'an r1cs whose hash ceremony.json pins is refused when it has another ' +
    'hash (r1cs.hash_mismatch), and accepted with its own',
  async () => {
    const dir = await ceremonyDir();
    await editConfig(dir, (config) => {
      config.circuits[1].r1csHash = '0f'.repeat(64);
    });
    const refused = await runCli(['init', '--data', dir]);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      new RegExp(
        'error \\[r1cs\\.hash_mismatch\\]: circuit treeUpdate: ' +
          'circuits\\/treeUpdate\\.r1cs has BLAKE2b-512 [0-9a-f]{128}; ' +
          'ceremony\\.json pins (0f){64}',
      ),
    );
    assert.deepEqual(await namesInFolder(dir), ['ceremony.json', 'circuits', 'ptau'], 'nothing may be written');
    const { hashFile } = await import('../../core/crypto/file-hash.ts');
    const hash = await hashFile(path.join(dir, 'circuits', 'treeUpdate.r1cs'));
    await editConfig(dir, (config) => {
      config.circuits[1].r1csHash = hash.toUpperCase();
    });
    const accepted = await runCli(['init', '--data', dir]);
    assert.equal(accepted.code, 0, accepted.stderr);
  },
);
