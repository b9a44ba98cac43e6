/**
 * The whole CLI ceremony on two of the test circuits: init, three contributions to every chain,
 * finalise, a manifest equal to what snarkjs's own CLI exports, and an audit that passes. Two chains
 * show each step as nine do (every step goes circuit by circuit) for two ninths of its work; the
 * nine circuits' public inputs are checked against the spec by tests/core/circuits.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  auditorConfigOf,
  devPtauHash,
  newCeremonyDir,
  REPO_ROOT,
  TEST_BEACON,
  TWO_CIRCUITS,
} from '../fixtures/ceremony-fixture.ts';
import { runCli, type CliResult } from '../helpers/run-cli.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';

const run = promisify(execFile);
const SNARKJS_CLI = path.join(REPO_ROOT, 'node_modules', 'snarkjs', 'build', 'cli.cjs');
const SPEC_PUBLIC_INPUTS: Record<string, number> = {
  register: 6,
  treeUpdate: 64,
  transact21: 12,
  transact22: 12,
  transact23: 12,
  transact42: 12,
  transact44: 12,
  transact82: 12,
  transact84: 12,
};

let dataDir: string;
let scratch: string;

before(async () => {
  dataDir = await newCeremonyDir({ circuits: TWO_CIRCUITS });
  scratch = await mkdtemp(path.join(tmpdir(), 'flow-'));
});

after(() => cleanUp(dataDir, scratch));

/** `ceremony finalise --beacon BEACON --iterations N` on the ceremony. */
function finalise(beacon = TEST_BEACON, iterations = '10'): Promise<CliResult> {
  return runCli(['finalise', '--beacon', beacon, '--iterations', iterations, '--data', dataDir]);
}

/** Asserts a run was refused: exit code 1, and `error` on stderr. */
function assertRefused(result: CliResult, error: RegExp): void {
  assert.equal(result.code, 1);
  assert.match(result.stderr, error);
}

describe('a ceremony from init to audit', () => {
  test('init creates contribution 0 of every chain', async () => {
    const result = await runCli(['init', '--data', dataDir]);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trim().split('\n');
    assert.equal(lines.length, TWO_CIRCUITS.length);
    for (const circuit of TWO_CIRCUITS) {
      const inputs = SPEC_PUBLIC_INPUTS[circuit];
      assert.ok(
        lines.some((l) => l.startsWith(`${circuit} initialised:`) && l.includes(`${inputs} public inputs`)),
        `${circuit} missing`,
      );
    }
  });

  test('init refuses to run again on an initialised folder', async () => {
    assertRefused(await runCli(['init', '--data', dataDir]), /error \[ceremony\.already_initialised\]/);
  });

  test('finalise refuses while a chain has only contribution 0', async () => {
    assertRefused(
      await finalise(),
      new RegExp(
        'error \\[finalise\\.too_few_contributions\\]: ceremony\\.json requires at ' +
          'least 1 contribution per circuit before finalising; too few for: register \\(0\\)',
      ),
    );
  });

  test('three contributions to every circuit, each printed with its hash', async () => {
    for (const name of ['alice', 'bob', 'carol']) {
      const result = await runCli(['contribute', '--all', '--name', name, '--data', dataDir]);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(
        result.stdout
          .trim()
          .split('\n')
          .filter((l) => / contribution hash [0-9a-f]{128}$/.test(l)).length,
        TWO_CIRCUITS.length,
      );
    }
    const state = await openCeremony(dataDir);
    for (const chain of state.chains.values()) {
      assert.equal(chain.headIndex, 3, chain.circuit.name);
      assert.deepEqual(
        chain.contributions.map((c) => c.contributor),
        ['alice', 'bob', 'carol'],
      );
    }
  });

  test('finalise refuses a beacon that is not hex and an out-of-range iteration count', async () => {
    assertRefused(await finalise('not-hex'), /error \[finalise\.bad_beacon\]/);
    assertRefused(await finalise(TEST_BEACON, '5'), /error \[finalise\.bad_iterations\]/);
  });

  test('finalise writes final keys, verification keys, verifiers and the manifest', async () => {
    const result = await finalise();
    assert.equal(result.code, 0, result.stderr);
    const state = await openCeremony(dataDir);
    const manifest = JSON.parse(await readFile(state.paths.manifestPath, 'utf8'));
    assert.deepEqual(
      Object.keys(manifest),
      state.config.circuits.map((c) => c.verifier),
    );
    for (const circuit of state.config.circuits) {
      // The manifest must equal what snarkjs's own CLI exports from the final key.
      const vkeyPath = path.join(scratch, `${circuit.name}.json`);
      await run(process.execPath, [
        SNARKJS_CLI,
        'zkey',
        'export',
        'verificationkey',
        state.paths.finalZkeyPath(circuit.name),
        vkeyPath,
      ]);
      const vkey = JSON.parse(await readFile(vkeyPath, 'utf8'));
      assert.deepEqual(manifest[circuit.verifier], { deltax1: vkey.vk_delta_2[0][1], deltax2: vkey.vk_delta_2[0][0] });
      assert.notDeepEqual(vkey.vk_delta_2, vkey.vk_gamma_2, 'delta must differ from gamma after phase 2');
      assert.deepEqual(JSON.parse(await readFile(state.paths.verificationKeyPath(circuit.name), 'utf8')), vkey);
      const solidity = await readFile(state.paths.solidityVerifierPath(circuit.verifier), 'utf8');
      assert.match(solidity, new RegExp(`contract ${circuit.verifier} \\{`));
      assert.ok(solidity.includes(`deltax1 = ${vkey.vk_delta_2[0][1]};`));
    }
    const beacons = state.transcript.entries.filter((e) => e.type === 'beacon');
    assert.equal(beacons.length, TWO_CIRCUITS.length);
    assert.ok(beacons.every((b) => b.type === 'beacon' && b.beacon === TEST_BEACON && b.index === 4));
  });

  test('no contribution is accepted after finalisation, and finalise does not run twice', async () => {
    assertRefused(await runCli(['contribute', 'register', '--data', dataDir]), /error \[ceremony\.finalised\]/);
    assertRefused(await finalise(), /error \[ceremony\.finalised\]/);
  });

  test('audit passes on the published folder', async () => {
    // A ceremony of two circuits: the auditor's config is the folder's own (the checkout's has nine).
    const config = ['--config', auditorConfigOf(dataDir)];
    const result = await runCli([
      'audit',
      dataDir,
      '--no-queue-log',
      '--quiet',
      ...config,
      '--ptau-hash',
      await devPtauHash(),
    ]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^audit passed$/m);
    // By default each final key against contribution 0 and its records, the finding saying so.
    const finalKeyChecked = / ok: 3 contributions \+ beacon: final-key check \(the default\): the final key against/;
    assert.equal(result.stdout.split('\n').filter((l) => finalKeyChecked.test(l)).length, TWO_CIRCUITS.length);
  });
});
