/**
 * `checkManifest` and `ceremony check-manifest` against the ceremony's final test keys: the
 * manifest that finalise wrote must match the verification keys exported from the zkeys; a key
 * whose δ equals its γ is a MISMATCH (exit 1) with its own code, naming circuit and verifier.
 */
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { checkManifest } from '../../core/deployment/check-manifest.ts';
import { circuitOfVerifier } from '../../core/deployment/circuit-of-verifier.ts';
import type { DeltaManifest } from '../../core/manifest/delta-manifest.ts';
import { finalisedCeremony } from '../fixtures/ceremony-fixture.ts';
import { lines, runCli } from '../helpers/run-cli.ts';
import { allMatch } from './spec-delta-manifest.ts';

let finalDir: string;
let manifestPath: string;
let manifest: DeltaManifest;
let workDir: string;

before(
  async () => {
    ({ finalDir } = await finalisedCeremony());
    manifestPath = join(finalDir, 'manifest.json');
    manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as DeltaManifest;
    workDir = await mkdtemp(join(tmpdir(), 'check-manifest-'));
  },
  { timeout: 300_000 },
);

after(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
  await releaseBn128();
});

function summary(report: Awaited<ReturnType<typeof checkManifest>>): string[] {
  return report.verifiers.map((v) => `${v.verifier} ${v.match ? 'match' : 'MISMATCH'}`);
}

test('verifier names map to circuit names', () => {
  assert.equal(circuitOfVerifier('VerifierTransact21'), 'transact21');
  assert.equal(circuitOfVerifier('VerifierTreeUpdate'), 'treeUpdate');
  assert.equal(circuitOfVerifier('VerifierRegister'), 'register');
  assert.equal(circuitOfVerifier('Verifier'), undefined);
  assert.equal(circuitOfVerifier('verifierRegister'), undefined);
  assert.equal(circuitOfVerifier('VerifierRegister.sol'), undefined);
});

describe('checkManifest', { timeout: 30_000 }, () => {
  test('the manifest written by finalise matches the nine final keys', async () => {
    const report = await checkManifest({ manifest, finalDir });
    assert.deepEqual(summary(report), allMatch(manifest));
    assert.ok(report.verifiers.every((v) => v.reasons.length === 0 && v.warnings.length === 0));
  });

  test(
    'a changed digit, swapped coordinates, a missing field and an unknown ' + 'verifier are each a MISMATCH',
    async () => {
      const { VerifierRegister: register, VerifierTreeUpdate: treeUpdate } = manifest;
      const tampered: Record<string, unknown> = {
        ...manifest,
        VerifierRegister: {
          ...register,
          deltax1: `${register!.deltax1.slice(0, -1)}${register!.deltax1.endsWith('0') ? '1' : '0'}`,
        },
        VerifierTreeUpdate: { deltax1: treeUpdate!.deltax2, deltax2: treeUpdate!.deltax1 },
        VerifierTransact21: { deltax1: manifest.VerifierTransact21!.deltax1 },
        VerifierNoSuchCircuit: register,
        register: register,
      };
      const report = await checkManifest({ manifest: tampered, finalDir });
      const reasons = Object.fromEntries(
        report.verifiers.map((v) => [v.verifier, v.match ? 'match' : v.reasons.join('; ')]),
      );
      assert.match(reasons.VerifierRegister!, /^deltax1 is \d+ in the manifest but \d+ in the final key of register$/);
      assert.match(reasons.VerifierTreeUpdate!, /^deltax1 is .*; deltax2 is .*$/);
      assert.equal(reasons.VerifierTransact21, 'manifest entry has no deltax2');
      assert.match(reasons.VerifierNoSuchCircuit!, /^neither noSuchCircuit\.zkey nor noSuchCircuit\.vkey\.json in /);
      assert.match(reasons.register!, /does not have the form Verifier<Circuit>/);
      assert.equal(reasons.VerifierTransact22, 'match');
    },
  );

  test(
    'without a zkey the vkey.json is used, with a warning; a key whose δ ' + 'equals γ is a MISMATCH with its code',
    async () => {
      const dir = await mkdtemp(join(workDir, 'vkeys-'));
      await copyFile(join(finalDir, 'register.vkey.json'), join(dir, 'register.vkey.json'));
      const vkey = JSON.parse(await readFile(join(finalDir, 'transact21.vkey.json'), 'utf8')) as Record<
        string,
        string[][]
      >;
      // A key that never went through Phase 2 has delta = gamma.
      await writeFile(join(dir, 'transact21.vkey.json'), JSON.stringify({ ...vkey, vk_delta_2: vkey.vk_gamma_2 }));
      const gamma = vkey.vk_gamma_2![0]!;
      const report = await checkManifest({
        manifest: {
          VerifierRegister: manifest.VerifierRegister,
          VerifierTransact21: { deltax1: gamma[1], deltax2: gamma[0] },
        },
        finalDir: dir,
      });
      const [register, transact21] = report.verifiers;
      assert.equal(register!.match, true);
      assert.deepEqual(register!.warnings, [
        'no register.zkey; compared with register.vkey.json, a file derived from the key, not the key itself',
      ]);
      assert.equal(transact21!.match, false);
      assert.deepEqual(transact21!.reasons, [
        '[vkey.delta_equals_gamma] circuit transact21 (VerifierTransact21): δ ' +
          'equals γ in the final key; the key never went through Phase 2 and ' +
          'anyone can forge its proofs',
      ]);

      const manifestFile = join(dir, 'manifest.json');
      await writeFile(
        manifestFile,
        JSON.stringify({
          VerifierRegister: manifest.VerifierRegister,
          VerifierTransact21: { deltax1: gamma[1], deltax2: gamma[0] },
        }),
      );
      const run = await runCli(['check-manifest', manifestFile, dir]);
      assert.equal(run.code, 1);
      assert.deepEqual(lines(run.stdout), ['VerifierRegister match', 'VerifierTransact21 MISMATCH']);
      assert.match(
        run.stderr,
        /^VerifierTransact21: \[vkey\.delta_equals_gamma\] circuit transact21 \(VerifierTransact21\): δ equals γ/m,
      );
    },
  );
});

describe('ceremony check-manifest', { timeout: 60_000 }, () => {
  test('exits 0 with one match line per verifier', async () => {
    const run = await runCli(['check-manifest', manifestPath, finalDir]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(lines(run.stdout), allMatch(manifest));
    assert.equal(run.stderr, '');
  });

  test('exits 1 when one delta differs, naming it on stderr', async () => {
    const entry = manifest.VerifierTransact84!;
    const path = join(workDir, 'tampered.json');
    const deltax2 = `${entry.deltax2.slice(0, -1)}${entry.deltax2.endsWith('0') ? '1' : '0'}`;
    await writeFile(path, JSON.stringify({ ...manifest, VerifierTransact84: { ...entry, deltax2 } }));
    const run = await runCli(['check-manifest', path, finalDir]);
    assert.equal(run.code, 1);
    assert.deepEqual(
      lines(run.stdout),
      Object.keys(manifest).map((name) => `${name} ${name === 'VerifierTransact84' ? 'MISMATCH' : 'match'}`),
    );
    assert.match(
      run.stderr,
      /^VerifierTransact84: deltax2 is \d+ in the manifest but \d+ in the final key of transact84$/m,
    );
  });
});
