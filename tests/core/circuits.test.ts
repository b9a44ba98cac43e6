/**
 * The project's test circuits: the committed r1cs files are what circom2 makes of the committed
 * sources, each has the spec's name, verifier and public-input count, and ceremony.json pins each
 * by its hash (the pin an auditor's checkout holds).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PROJECT_DATA_DIR } from '../fixtures/ceremony-fixture.ts';
import { loadCeremonyConfig } from '../../core/config/ceremony-config.ts';
import { compileCircuit } from '../../core/setup/compile-circuit.ts';
import { readR1csSummary } from '../../core/setup/r1cs-header.ts';
import { hashFile } from '../../core/crypto/file-hash.ts';

const SPEC = [
  ['register', 'VerifierRegister', 6],
  ['treeUpdate', 'VerifierTreeUpdate', 64],
  ['transact21', 'VerifierTransact21', 12],
  ['transact22', 'VerifierTransact22', 12],
  ['transact23', 'VerifierTransact23', 12],
  ['transact42', 'VerifierTransact42', 12],
  ['transact44', 'VerifierTransact44', 12],
  ['transact82', 'VerifierTransact82', 12],
  ['transact84', 'VerifierTransact84', 12],
] as const;

const scratch = mkdtemp(path.join(tmpdir(), 'circuits-'));
after(async () => rm(await scratch, { recursive: true, force: true }));

test(
  'ceremony.json names the nine circuits of the spec, in order, with ' + 'their verifiers and public inputs',
  async () => {
    const config = await loadCeremonyConfig(PROJECT_DATA_DIR);
    assert.deepEqual(
      config.circuits.map((c) => [c.name, c.verifier, c.publicInputs]),
      SPEC,
    );
    assert.equal(
      config.testNetwork,
      true,
      'the project ceremony runs on a development ptau and must stay a test network',
    );
  },
);

test('every committed r1cs has the spec public-input count and a few hundred constraints or more', async () => {
  const config = await loadCeremonyConfig(PROJECT_DATA_DIR);
  for (const circuit of config.circuits) {
    const summary = await readR1csSummary(circuit.r1csPath);
    assert.equal(summary.publicInputs, circuit.publicInputs, circuit.name);
    assert.ok(
      summary.nConstraints >= 300 && summary.nConstraints <= 4000,
      `${circuit.name}: ${summary.nConstraints} constraints`,
    );
  }
});

test('compiling the sources with circom2 reproduces the committed r1cs byte for byte', async () => {
  const config = await loadCeremonyConfig(PROJECT_DATA_DIR);
  const out = await scratch;
  await Promise.all(
    config.circuits.map(async (circuit) => {
      const built = await compileCircuit(circuit.r1csPath.replace(/\.r1cs$/, '.circom'), out);
      assert.ok(
        (await readFile(built)).equals(await readFile(circuit.r1csPath)),
        `${circuit.name}.r1cs is out of date: run npm run build:circuits`,
      );
    }),
  );
});

test('ceremony.json pins every committed r1cs by its BLAKE2b-512, and no pin is stale', async () => {
  // The auditor's checkout holds this file: an r1cs it does not pin makes every audit fail
  // (audit.r1cs_unpinned), and a stale pin makes init and the audit refuse the committed circuit.
  const config = await loadCeremonyConfig(PROJECT_DATA_DIR);
  for (const circuit of config.circuits) {
    assert.ok(circuit.r1csHash, `${circuit.name} has no r1csHash in ceremony-data/ceremony.json`);
    assert.equal(
      await hashFile(circuit.r1csPath),
      circuit.r1csHash,
      `the r1csHash of ${circuit.name} is stale: set it to what \`b2sum ${circuit.r1cs}\` prints`,
    );
  }
});
